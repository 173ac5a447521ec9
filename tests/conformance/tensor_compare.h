// Tensor comparison for conformance tests: is an output close enough to the
// reference?
//
// The rule is numpy.testing.assert_allclose's, which is what ONNX's own
// backend tests use: |actual - expected| <= atol + rtol * |expected| per
// element, NaN matches NaN, an infinity only itself. Integer and bool tensors
// must match exactly, and types (dtype and shape) always must.
#pragma once

#include <optional>
#include <string>

#include "collage/ir/tensor.h"

namespace collage::testing {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

// nullopt when `actual` matches `expected`; otherwise one line saying how it
// differs: the type mismatch, or how many elements differ and the worst one.
std::optional<std::string> compare_tensors(const Tensor& actual, const Tensor& expected,
                                           const Tolerance& tolerance = {});

}  // namespace collage::testing
