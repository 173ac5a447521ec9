// Helpers for the halide backend tests: small graphs with random data, and
// a Halide kernel checked against the native reference executor.
//
// Compiled kernels go to a cache in the build tree (COLLAGE_HALIDE_CACHE set
// by the test's main), so a second run of the suite loads instead of
// compiling. The tolerance is relative to the output's largest magnitude:
// Halide reorders sums, and its exp, tanh and erf are not libm's.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends/backend_test_util.h"
#include "collage/backends/halide/halide_backend.h"
#include "collage/ir/graph.h"

namespace collage::testing {

inline const Backend& halide_backend() { return backend_instance<make_halide_backend>(); }

// Compiles `graph` with Halide, runs it and the native reference on the
// same random inputs, and checks every output within `tolerance`.
inline void expect_halide_matches(const Graph& graph, int threads = 2, double tolerance = 1e-5,
                                  float low = -1.0f, float high = 1.0f) {
  for (const Node& node : graph.nodes()) {
    ASSERT_TRUE(halide_backend().supports(graph, node)) << node.op_type << " is not supported";
  }
  expect_backend_matches_reference(halide_backend(), graph, threads, tolerance, low, high);
}

using Ints = std::vector<std::int64_t>;

}  // namespace collage::testing
