// Helpers for the XNNPACK backend tests: building small graphs with random
// data and checking an XNNPACK kernel against the native reference executor.
//
// The tolerance is relative to the output's largest magnitude (1e-4): XNNPACK
// reorders sums and approximates transcendental functions, so bit equality
// is not expected, but any indexing or layout mistake is far outside it.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend_test_util.h"
#include "collage/backends/xnnpack/xnnpack_backend.h"
#include "collage/ir/graph.h"

namespace collage::testing {

// A graph under construction (the shared builder; opset 13, its own seeds).
class GraphMaker : public OpGraphBuilder {
 public:
  explicit GraphMaker(std::int64_t opset = 13) : OpGraphBuilder(opset, 1234) {}
};

inline const Backend& xnnpack_backend() { return backend_instance<make_xnnpack_backend>(); }

// Compiles `graph` with XNNPACK, runs it and the native reference on the same
// random inputs, and checks every output within `tolerance`.
inline void expect_matches_reference(const Graph& graph, int threads = 1, double tolerance = 1e-4,
                                     float low = -1.0f, float high = 1.0f) {
  expect_backend_matches_reference(xnnpack_backend(), graph, threads, tolerance, low, high);
}

using Ints = std::vector<std::int64_t>;

}  // namespace collage::testing
