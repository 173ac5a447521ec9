// Helpers for the oneDNN backend tests: building small graphs, running them
// on oneDNN and on the native reference executor, and comparing the results.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend_test_util.h"
#include "collage/backends/onednn/lowering.h"
#include "collage/backends/onednn/onednn_backend.h"
#include "collage/ir/graph.h"

namespace collage::onednn_test {

using testing::attrs;
using testing::f32;
using testing::random_inputs;
using testing::random_tensor;
using testing::run;
using testing::run_reference;
using GraphBuilder = testing::OpGraphBuilder;

inline Tensor scalar(float value) { return Tensor::from_vector<float>({value}, {}); }

inline const Backend& onednn_backend() { return testing::backend_instance<make_onednn_backend>(); }

// oneDNN's outputs for `inputs`; fails the test when compilation fails.
inline std::vector<Tensor> run_onednn(const Graph& graph, const std::vector<Tensor>& inputs,
                                      int threads = 1) {
  Result<std::unique_ptr<Kernel>> kernel = onednn_backend().compile(graph, CompileOptions{threads});
  EXPECT_TRUE(kernel.ok()) << (kernel.ok() ? "" : kernel.error());
  if (!kernel.ok()) return {};
  return run(*kernel.value(), graph, inputs);
}

// The steps of the program `graph` lowers to, in the order they run; fails
// the test (and returns none) when lowering fails.
inline std::vector<onednn::Step> lowered_steps(const Graph& graph) {
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  Result<onednn::Program> program =
      onednn::lower_partition(graph, engine, stream, CompileOptions{});
  EXPECT_TRUE(program.ok()) << (program.ok() ? "" : program.error());
  if (!program.ok()) return {};
  return program.value().steps;
}

// Every element within `relative` of the largest magnitude in `expected`.
inline ::testing::AssertionResult all_close(const Tensor& actual, const Tensor& expected,
                                            double relative = 1e-4) {
  if (actual.type() != expected.type()) {
    return ::testing::AssertionFailure() << "types differ: " << actual.type().to_string() << " vs "
                                         << expected.type().to_string();
  }
  const float* a = actual.data<float>();
  const float* e = expected.data<float>();
  double scale = 0;
  for (std::int64_t i = 0; i < expected.numel(); ++i)
    scale = std::max(scale, std::abs(double(e[i])));
  const double tolerance = relative * std::max(scale, 1e-6);
  for (std::int64_t i = 0; i < expected.numel(); ++i) {
    const double diff = std::abs(double(a[i]) - double(e[i]));
    if (!(diff <= tolerance)) {
      return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " vs expected "
                                           << e[i] << " (tolerance " << tolerance << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// Compiles `graph` with oneDNN and checks every output against the native
// reference executor on random inputs.
inline ::testing::AssertionResult matches_reference(const Graph& graph, int threads = 1,
                                                    float low = -1.f, float high = 1.f) {
  Result<std::unique_ptr<Kernel>> kernel = onednn_backend().compile(graph, CompileOptions{threads});
  if (!kernel.ok()) return ::testing::AssertionFailure() << "compile failed: " << kernel.error();
  const std::vector<Tensor> inputs = random_inputs(graph, 7, low, high);
  const std::vector<Tensor> actual = run(*kernel.value(), graph, inputs);
  const std::vector<Tensor> expected = run_reference(graph, inputs);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    ::testing::AssertionResult close = all_close(actual[i], expected[i]);
    if (!close) return close << " (output " << i << ")";
  }
  return ::testing::AssertionSuccess();
}

// The reason compiling `graph` fails, or "" when it compiles.
inline std::string compile_failure(const Graph& graph) {
  Result<std::unique_ptr<Kernel>> kernel = onednn_backend().compile(graph, CompileOptions{1});
  return kernel.ok() ? std::string() : kernel.error();
}

}  // namespace collage::onednn_test
