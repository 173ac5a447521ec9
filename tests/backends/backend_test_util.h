// What every backend's tests share: random float tensors, small graphs built
// node by node, running a kernel and the native reference executor on the
// same inputs. Each backend's own helper header (onednn_test_util.h,
// reference_check.h, ...) adds only what is particular to that backend.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "collage/backends/backend.h"
#include "collage/backends/native/native_backend.h"
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

// A random tensor per graph input, seeds counting up from `seed`.
inline std::vector<Tensor> random_inputs(const Graph& graph, std::uint32_t seed, float low = -1.0f,
                                         float high = 1.0f) {
  std::vector<Tensor> inputs;
  for (ValueId input : graph.inputs()) {
    inputs.push_back(random_tensor(graph.type(input).shape, seed++, low, high));
  }
  return inputs;
}

inline Attributes attrs(std::initializer_list<std::pair<std::string, AttributeValue>> entries) {
  Attributes result;
  for (const auto& [name, value] : entries) result.set(name, value);
  return result;
}

// Zero-filled tensors for the graph's outputs.
inline std::vector<Tensor> allocate_outputs(const Graph& graph) {
  std::vector<Tensor> outputs;
  for (ValueId output : graph.outputs()) outputs.push_back(Tensor::zeros(graph.type(output)));
  return outputs;
}

// Runs `kernel` (compiled from `graph`) and returns its outputs.
inline std::vector<Tensor> run(Kernel& kernel, const Graph& graph,
                               const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outputs = allocate_outputs(graph);
  kernel.run(inputs, outputs);
  return outputs;
}

// The native reference executor's outputs.
inline std::vector<Tensor> run_reference(const Graph& graph, const std::vector<Tensor>& inputs) {
  return run(*compile_reference(graph, 1), graph, inputs);
}

// One instance of the backend `Make` builds, for all tests of a binary.
template <std::unique_ptr<Backend> (*Make)()>
const Backend& backend_instance() {
  static const std::unique_ptr<Backend> backend = Make();
  return *backend;
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

// Compiles `graph` with `backend`, runs it and the native reference on the
// same random inputs (uniform in [low, high)), and checks every output
// within `tolerance` (relative_error).
inline void expect_backend_matches_reference(const Backend& backend, const Graph& graph,
                                             int threads, double tolerance, float low, float high) {
  auto kernel = backend.compile(graph, CompileOptions{threads});
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

// The element offset of [n, c, h, w] of a [N,C,H,W] tensor stored in
// `layout` (EdgeLayout).
inline std::int64_t edge_offset(const Shape& s, EdgeLayout layout, std::int64_t n, std::int64_t c,
                                std::int64_t h, std::int64_t w) {
  const std::int64_t C = s[1], H = s[2], W = s[3];
  if (layout == EdgeLayout::kChannelsLast) return ((n * H + h) * W + w) * C + c;
  if (const std::int64_t b = edge_layout_block(layout)) {
    return (((n * (C / b) + c / b) * H + h) * W + w) * b + c % b;
  }
  return ((n * C + c) * H + h) * W + w;
}

// A plain [N,C,H,W] tensor's values stored in `layout` (to_plain = false),
// or a tensor stored in `layout` back in plain order (to_plain = true); of
// any element type.
inline Tensor convert_edge_layout(const Tensor& from, EdgeLayout layout, bool to_plain) {
  if (layout == EdgeLayout::kPlain) return from.clone();
  const Shape& s = from.shape();
  Tensor to = Tensor::allocate(from.type());
  const std::size_t size = dtype_size(from.dtype());
  const auto* src = static_cast<const std::uint8_t*>(from.raw());
  auto* dst = static_cast<std::uint8_t*>(to.raw());
  for (std::int64_t n = 0; n < s[0]; ++n)
    for (std::int64_t c = 0; c < s[1]; ++c)
      for (std::int64_t h = 0; h < s[2]; ++h)
        for (std::int64_t w = 0; w < s[3]; ++w) {
          const std::int64_t plain = edge_offset(s, EdgeLayout::kPlain, n, c, h, w);
          const std::int64_t stored = edge_offset(s, layout, n, c, h, w);
          const std::int64_t to_index = to_plain ? plain : stored;
          const std::int64_t from_index = to_plain ? stored : plain;
          std::memcpy(dst + to_index * size, src + from_index * size, size);
        }
  return to;
}

// Compiles `graph` with every input in `input_layout` and every output in
// `output_layout`, runs it twice on random inputs stored that way, and
// checks the outputs, converted back, against the reference on the plain
// inputs.
inline void expect_edge_layouts_match_reference(const Backend& backend, const Graph& graph,
                                                EdgeLayout input_layout, EdgeLayout output_layout,
                                                int threads, double tolerance = 1e-4) {
  CompileOptions options{threads};
  options.input_layouts.assign(graph.inputs().size(), input_layout);
  options.output_layouts.assign(graph.outputs().size(), output_layout);
  auto kernel = backend.compile(graph, options);
  ASSERT_TRUE(kernel.ok()) << kernel.error();
  std::vector<Tensor> inputs = random_inputs(graph, 5);
  std::vector<Tensor> stored_inputs;
  for (const Tensor& input : inputs) {
    stored_inputs.push_back(convert_edge_layout(input, input_layout, false));
  }
  std::vector<Tensor> actual = allocate_outputs(graph);
  std::vector<Tensor> expected = allocate_outputs(graph);
  for (int run = 0; run < 2; ++run) (*kernel)->run(stored_inputs, actual);
  compile_reference(graph, 1)->run(inputs, expected);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_LE(relative_error(convert_edge_layout(actual[i], output_layout, true), expected[i]),
              tolerance)
        << "output " << i << " in " << edge_layout_name(output_layout) << ", inputs in "
        << edge_layout_name(input_layout);
  }
}

// A float graph under construction, with generated value names and random
// constants (seeds counting up from `first_seed`).
class OpGraphBuilder {
 public:
  explicit OpGraphBuilder(std::int64_t opset = 17, std::uint32_t first_seed = 1000)
      : seed_(first_seed) {
    graph_.opset = opset;
  }

  ValueId input(const Shape& shape) { return graph_.add_input(next_name("x"), f32(shape)); }
  ValueId constant(Tensor tensor) { return graph_.add_constant(next_name("c"), std::move(tensor)); }
  // A constant of random values.
  ValueId weights(const Shape& shape, float low = -1.0f, float high = 1.0f) {
    return constant(random_tensor(shape, seed_++, low, high));
  }
  ValueId scalar(float value) { return constant(Tensor::from_vector<float>({value}, {})); }
  ValueId ints(const std::vector<std::int64_t>& values) {
    return constant(
        Tensor::from_vector<std::int64_t>(values, {static_cast<std::int64_t>(values.size())}));
  }
  // Adds a node with one output of `shape`; returns the output.
  ValueId node(const std::string& op_type, std::vector<ValueId> inputs, const Shape& shape,
               Attributes attributes = {}) {
    ValueId out = graph_.add_value(next_name("v"), f32(shape));
    graph_.add_node(op_type, std::move(inputs), {out}, std::move(attributes));
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
  std::uint32_t seed_;
};

}  // namespace collage::testing
