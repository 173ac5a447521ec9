// Runs one native op on hand-written tensors, for the tensor op tests.
//
// A test states an op, its inputs (graph inputs, or constants when the op
// treats constant inputs differently), the static output types the graph
// would have, attributes and the opset; run_op builds the one-node graph and
// evaluates it through native_evaluator(), the same path constant folding
// takes.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collage/backends/native/native_backend.h"
#include "collage/ir/error.h"
#include "collage/ir/graph.h"

namespace collage::native_test {

inline Tensor f32(Shape shape, std::vector<float> values) {
  return Tensor::from_vector<float>(values, std::move(shape));
}
inline Tensor i64(Shape shape, std::vector<std::int64_t> values) {
  return Tensor::from_vector<std::int64_t>(values, std::move(shape));
}
inline Tensor i32(Shape shape, std::vector<std::int32_t> values) {
  return Tensor::from_vector<std::int32_t>(values, std::move(shape));
}
inline Tensor boolean(Shape shape, std::vector<bool> values) {
  Tensor tensor = Tensor::allocate(TensorType{DType::kBool, std::move(shape)});
  for (std::size_t i = 0; i < values.size(); ++i) tensor.data<bool>()[i] = values[i];
  return tensor;
}
inline TensorType type(DType dtype, Shape shape) { return TensorType{dtype, std::move(shape)}; }

struct OpInput {
  // An empty tensor stands for an omitted optional input.
  Tensor tensor;
  bool constant = false;
};

inline OpInput constant(Tensor tensor) { return OpInput{std::move(tensor), true}; }

struct OpCase {
  std::string op_type;
  std::vector<OpInput> inputs;
  std::vector<TensorType> outputs;
  Attributes attributes;
  std::int64_t opset = 13;
};

inline Graph single_node_graph(const OpCase& op) {
  Graph graph;
  graph.opset = op.opset;
  std::vector<ValueId> inputs;
  for (std::size_t i = 0; i < op.inputs.size(); ++i) {
    const OpInput& input = op.inputs[i];
    const std::string name = "in" + std::to_string(i);
    if (input.tensor.empty()) {
      inputs.push_back(kNoValue);
    } else if (input.constant) {
      inputs.push_back(graph.add_constant(name, input.tensor));
    } else {
      inputs.push_back(graph.add_input(name, input.tensor.type()));
    }
  }
  std::vector<ValueId> outputs;
  for (std::size_t i = 0; i < op.outputs.size(); ++i) {
    outputs.push_back(graph.add_value("out" + std::to_string(i), op.outputs[i]));
  }
  graph.add_node(op.op_type, inputs, outputs, op.attributes, "node");
  for (ValueId output : outputs) graph.add_output(output);
  return graph;
}

inline bool op_supported(const OpCase& op) {
  const Graph graph = single_node_graph(op);
  return native_evaluator().can_evaluate(graph, graph.node(0));
}

// The op's outputs. Fails the test when the evaluator says it cannot run it.
inline std::vector<Tensor> run_op(const OpCase& op) {
  const Graph graph = single_node_graph(op);
  EXPECT_TRUE(native_evaluator().can_evaluate(graph, graph.node(0)))
      << op.op_type << " is not supported here";
  std::vector<Tensor> inputs;
  for (const OpInput& input : op.inputs) inputs.push_back(input.tensor);
  return native_evaluator().evaluate(graph, graph.node(0), inputs);
}

// The single output of the op.
inline Tensor run_one(const OpCase& op) { return run_op(op).at(0); }

template <typename T>
std::vector<T> values(const Tensor& tensor) {
  const T* data = tensor.data<T>();
  return std::vector<T>(data, data + tensor.numel());
}

inline void expect_near(const Tensor& actual, const std::vector<float>& expected,
                        float tolerance = 1e-6f) {
  ASSERT_EQ(actual.dtype(), DType::kFloat32);
  ASSERT_EQ(actual.numel(), static_cast<std::int64_t>(expected.size()));
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(actual.data<float>()[i], expected[i], tolerance) << "at element " << i;
  }
}

}  // namespace collage::native_test
