// Helpers shared by the openblas backend tests: building one-op graphs,
// compiling them on the backend, running them on deterministic data, and
// comparing with a tolerance suited to float32 GEMMs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend_test_util.h"
#include "collage/backends/openblas/openblas_backend.h"
#include "collage/runtime/random_inputs.h"

namespace collage::openblas_test {

using testing::f32;

inline const Backend& backend() { return testing::backend_instance<make_openblas_backend>(); }

// Compiles `graph` as one partition; records a test failure (and returns
// nullptr) when the backend refuses it.
inline std::unique_ptr<Kernel> compile(const Graph& graph, int threads = 1) {
  Result<std::unique_ptr<Kernel>> kernel = backend().compile(graph, CompileOptions{threads});
  if (!kernel) {
    ADD_FAILURE() << "compile failed: " << kernel.error();
    return nullptr;
  }
  return std::move(*kernel);
}

// Deterministic data for each graph input, in graph.inputs() order.
inline std::vector<Tensor> inputs_for(const Graph& graph, std::uint64_t seed = 1) {
  std::vector<Tensor> inputs;
  for (ValueId id : graph.inputs()) {
    inputs.push_back(random_tensor(graph.type(id), graph.value(id).name, RandomOptions{seed}));
  }
  return inputs;
}

// A constant of `type` with deterministic data.
inline Tensor random_constant(const TensorType& type, const std::string& name) {
  return random_tensor(type, name, RandomOptions{7});
}

// Runs `kernel` on `inputs` and returns the graph's single output.
inline Tensor run(Kernel& kernel, const Graph& graph, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outputs = {Tensor::allocate(graph.type(graph.outputs().at(0)))};
  kernel.run(inputs, outputs);
  return outputs[0];
}

// Compiles and runs `graph` on the backend in one go.
inline Tensor compile_and_run(const Graph& graph, const std::vector<Tensor>& inputs,
                              int threads = 1) {
  std::unique_ptr<Kernel> kernel = compile(graph, threads);
  if (kernel == nullptr) return {};
  return run(*kernel, graph, inputs);
}

// |actual - expected| <= atol + rtol * |expected| everywhere, shapes equal.
inline ::testing::AssertionResult all_close(const Tensor& actual, const Tensor& expected,
                                            double rtol = 1e-4, double atol = 1e-4) {
  if (actual.empty() || expected.empty()) return ::testing::AssertionFailure() << "no tensor";
  if (actual.type() != expected.type()) {
    return ::testing::AssertionFailure() << "types differ: " << actual.type().to_string() << " vs "
                                         << expected.type().to_string();
  }
  const float* a = actual.data<float>();
  const float* e = expected.data<float>();
  std::int64_t bad = 0;
  std::int64_t worst = -1;
  double worst_error = 0;
  for (std::int64_t i = 0; i < actual.numel(); ++i) {
    double error = std::fabs(static_cast<double>(a[i]) - e[i]);
    if (!(error <= atol + rtol * std::fabs(e[i]))) {
      ++bad;
      if (worst < 0 || error > worst_error || std::isnan(error)) {
        worst = i;
        worst_error = error;
      }
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << actual.numel() << " elements differ; worst at " << worst << ": "
         << a[worst] << " vs " << e[worst];
}

}  // namespace collage::openblas_test
