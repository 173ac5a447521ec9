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
#include <random>
#include <string>
#include <vector>

#include "collage/backends/native/native_backend.h"
#include "collage/backends/xnnpack/xnnpack_backend.h"
#include "collage/ir/graph.h"

namespace collage::testing {

inline TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

// Uniform values in [low, high), the same for the same seed.
inline Tensor random_tensor(const Shape& shape, std::uint32_t seed, float low = -1.0f,
                            float high = 1.0f) {
  Tensor tensor = Tensor::allocate(f32(shape));
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> distribution(low, high);
  float* data = tensor.data<float>();
  for (std::int64_t i = 0; i < tensor.numel(); ++i) data[i] = distribution(engine);
  return tensor;
}

inline Tensor int64_tensor(const std::vector<std::int64_t>& values) {
  return Tensor::from_vector<std::int64_t>(values, {static_cast<std::int64_t>(values.size())});
}

// A graph under construction, with generated value names.
class GraphMaker {
 public:
  explicit GraphMaker(std::int64_t opset = 13) { graph_.opset = opset; }

  ValueId input(const Shape& shape) { return graph_.add_input(next_name("x"), f32(shape)); }
  // A constant of random values.
  ValueId weight(const Shape& shape, float low = -1.0f, float high = 1.0f) {
    return graph_.add_constant(next_name("w"), random_tensor(shape, seed_++, low, high));
  }
  ValueId constant(Tensor tensor) { return graph_.add_constant(next_name("c"), std::move(tensor)); }
  ValueId scalar(float value) { return constant(Tensor::from_vector<float>({value}, {})); }
  ValueId ints(const std::vector<std::int64_t>& values) { return constant(int64_tensor(values)); }

  // Adds a node with one output of `shape`; returns the output.
  ValueId op(const std::string& op_type, const std::vector<ValueId>& inputs, const Shape& shape,
             Attributes attributes = {}) {
    ValueId out = graph_.add_value(next_name("y"), f32(shape));
    graph_.add_node(op_type, inputs, {out}, std::move(attributes));
    return out;
  }
  void output(ValueId value) { graph_.add_output(value); }

  // The graph, with `last` as its output when no output was marked.
  Graph finish(ValueId last) {
    if (graph_.outputs().empty()) graph_.add_output(last);
    return graph_;
  }
  Graph& graph() { return graph_; }

 private:
  std::string next_name(const char* prefix) { return prefix + std::to_string(counter_++); }

  Graph graph_;
  int counter_ = 0;
  std::uint32_t seed_ = 1234;
};

inline const Backend& xnnpack_backend() {
  static const std::unique_ptr<Backend> backend = make_xnnpack_backend();
  return *backend;
}

inline std::vector<Tensor> allocate_outputs(const Graph& graph) {
  std::vector<Tensor> outputs;
  for (ValueId output : graph.outputs()) outputs.push_back(Tensor::allocate(graph.type(output)));
  return outputs;
}

inline std::vector<Tensor> random_inputs(const Graph& graph, std::uint32_t seed, float low,
                                         float high) {
  std::vector<Tensor> inputs;
  for (ValueId input : graph.inputs()) {
    inputs.push_back(random_tensor(graph.type(input).shape, seed++, low, high));
  }
  return inputs;
}

// Largest |a - b| over the largest |b|; 0 when both are all zero.
inline double relative_error(const Tensor& actual, const Tensor& expected) {
  double max_error = 0.0;
  double max_magnitude = 0.0;
  const float* a = actual.data<float>();
  const float* e = expected.data<float>();
  for (std::int64_t i = 0; i < expected.numel(); ++i) {
    if (std::isnan(a[i]) != std::isnan(e[i])) return INFINITY;
    if (std::isnan(e[i])) continue;
    max_error = std::max(max_error, std::abs(static_cast<double>(a[i]) - e[i]));
    max_magnitude = std::max(max_magnitude, std::abs(static_cast<double>(e[i])));
  }
  if (max_error == 0.0) return 0.0;
  return max_magnitude == 0.0 ? INFINITY : max_error / max_magnitude;
}

// Compiles `graph` with XNNPACK, runs it and the native reference on the same
// random inputs, and checks every output within `tolerance`.
inline void expect_matches_reference(const Graph& graph, int threads = 1, double tolerance = 1e-4,
                                     float low = -1.0f, float high = 1.0f) {
  auto kernel = xnnpack_backend().compile(graph, CompileOptions{threads});
  ASSERT_TRUE(kernel.ok()) << kernel.error();
  std::vector<Tensor> inputs = random_inputs(graph, 77, low, high);
  std::vector<Tensor> actual = allocate_outputs(graph);
  std::vector<Tensor> expected = allocate_outputs(graph);
  (*kernel)->run(inputs, actual);
  compile_reference(graph, 1)->run(inputs, expected);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_LE(relative_error(actual[i], expected[i]), tolerance)
        << "output " << i << " (" << graph.value(graph.outputs()[i]).name << ", "
        << expected[i].type().to_string() << ")";
  }
}

inline Attributes attrs(std::initializer_list<std::pair<std::string, AttributeValue>> entries) {
  Attributes result;
  for (const auto& [name, value] : entries) result.set(name, value);
  return result;
}

using Ints = std::vector<std::int64_t>;

}  // namespace collage::testing
