// Imports a model with the native evaluator and runs the graph with the
// native reference executor, so that tests of the importer can check what a
// model computes, not only its types.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collage/backends/native/native_backend.h"
#include "collage/ir/graph.h"
#include "collage/onnx/importer.h"
#include "onnx/model_builder.h"

namespace collage::testing {

// Imports `m` with the native evaluator folding constants, as the CLI does.
inline Graph import_with_native(const ModelBuilder& m) {
  ImportOptions options;
  options.evaluator = &native_evaluator();
  return import_onnx_model(m.shared(), options);
}

// The first node of `op_type` (a test failure when there is none).
inline const Node& only_node(const Graph& g, const std::string& op_type) {
  for (const Node& node : g.nodes()) {
    if (node.op_type == op_type) return node;
  }
  ADD_FAILURE() << "no " << op_type << " node";
  return g.node(0);
}

inline Tensor int64s(std::vector<std::int64_t> values) {
  const auto count = static_cast<std::int64_t>(values.size());
  return Tensor::from_vector<std::int64_t>(values, {count});
}

inline std::vector<Tensor> run_reference(const Graph& graph, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outputs;
  for (ValueId output : graph.outputs()) outputs.push_back(Tensor::allocate(graph.type(output)));
  compile_reference(graph, 1)->run(inputs, outputs);
  return outputs;
}

// 0, 1, 2, ... in a float tensor of `shape`.
inline Tensor iota(Shape shape) {
  Tensor tensor = Tensor::allocate(TensorType{DType::kFloat32, std::move(shape)});
  for (std::int64_t i = 0; i < tensor.numel(); ++i) tensor.data<float>()[i] = float(i);
  return tensor;
}

inline std::vector<float> floats(const Tensor& tensor) {
  return std::vector<float>(tensor.data<float>(), tensor.data<float>() + tensor.numel());
}

}  // namespace collage::testing
