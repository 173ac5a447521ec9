// Helpers for the oneDNN backend tests: building small graphs, running them
// on oneDNN and on the native reference executor, and comparing the results.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "collage/backends/native/native_backend.h"
#include "collage/backends/onednn/onednn_backend.h"
#include "collage/ir/graph.h"

namespace collage::onednn_test {

inline TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

// Uniform values in [low, high), deterministic for a seed.
inline Tensor random_tensor(const Shape& shape, unsigned seed, float low = -1.f, float high = 1.f) {
  Tensor tensor = Tensor::allocate(f32(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  float* data = tensor.data<float>();
  for (std::int64_t i = 0; i < tensor.numel(); ++i) data[i] = dist(rng);
  return tensor;
}

inline Tensor scalar(float value) { return Tensor::from_vector<float>({value}, {}); }

// A graph under construction; values are named automatically.
class GraphBuilder {
 public:
  explicit GraphBuilder(std::int64_t opset = 17) { graph_.opset = opset; }

  ValueId input(const Shape& shape) { return graph_.add_input(next_name("x"), f32(shape)); }
  ValueId constant(Tensor tensor) { return graph_.add_constant(next_name("c"), std::move(tensor)); }
  ValueId weights(const Shape& shape, float low = -1.f, float high = 1.f) {
    return constant(random_tensor(shape, seed_++, low, high));
  }
  // Adds a node with one output of `shape`.
  ValueId node(const std::string& op_type, std::vector<ValueId> inputs, const Shape& shape,
               Attributes attributes = {}) {
    ValueId out = graph_.add_value(next_name("v"), f32(shape));
    graph_.add_node(op_type, std::move(inputs), {out}, std::move(attributes));
    return out;
  }
  void output(ValueId value) { graph_.add_output(value); }

  Graph& graph() { return graph_; }

 private:
  std::string next_name(const char* prefix) { return prefix + std::to_string(counter_++); }

  Graph graph_;
  int counter_ = 0;
  unsigned seed_ = 1000;
};

inline Attributes attrs(std::initializer_list<std::pair<std::string, AttributeValue>> list) {
  Attributes result;
  for (const auto& [name, value] : list) result.set(name, value);
  return result;
}

inline std::vector<Tensor> random_inputs(const Graph& graph, unsigned seed, float low = -1.f,
                                         float high = 1.f) {
  std::vector<Tensor> inputs;
  for (ValueId input : graph.inputs()) {
    inputs.push_back(random_tensor(graph.type(input).shape, seed++, low, high));
  }
  return inputs;
}

inline std::vector<Tensor> run(Kernel& kernel, const Graph& graph,
                               const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outputs;
  for (ValueId output : graph.outputs()) outputs.push_back(Tensor::zeros(graph.type(output)));
  kernel.run(inputs, outputs);
  return outputs;
}

inline const Backend& onednn_backend() {
  static const std::unique_ptr<Backend> backend = make_onednn_backend();
  return *backend;
}

// oneDNN's outputs for `inputs`; fails the test when compilation fails.
inline std::vector<Tensor> run_onednn(const Graph& graph, const std::vector<Tensor>& inputs,
                                      int threads = 1) {
  Result<std::unique_ptr<Kernel>> kernel = onednn_backend().compile(graph, CompileOptions{threads});
  EXPECT_TRUE(kernel.ok()) << (kernel.ok() ? "" : kernel.error());
  if (!kernel.ok()) return {};
  return run(*kernel.value(), graph, inputs);
}

inline std::vector<Tensor> run_reference(const Graph& graph, const std::vector<Tensor>& inputs) {
  std::unique_ptr<Kernel> kernel = compile_reference(graph, 1);
  return run(*kernel, graph, inputs);
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
