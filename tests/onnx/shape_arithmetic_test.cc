#include "collage/onnx/shape_arithmetic.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collage/ir/error.h"
#include "onnx/shape_ops_evaluator.h"

namespace collage {
namespace {

using testing::ShapeOpsEvaluator;

// One node of `op_type` over constants `inputs`, writing a value of `out`.
struct OneNode {
  Graph graph;
  NodeId node = kNoNode;
  std::vector<Tensor> inputs;

  OneNode(const std::string& op_type, std::vector<Tensor> constants, TensorType out,
          Attributes attributes = {}) {
    std::vector<ValueId> ids;
    for (std::size_t i = 0; i < constants.size(); ++i) {
      ids.push_back(graph.add_constant("in" + std::to_string(i), constants[i]));
    }
    ValueId y = graph.add_value("y", std::move(out));
    node = graph.add_node(op_type, ids, {y}, std::move(attributes), "the_node");
    graph.add_output(y);
    inputs = std::move(constants);
  }

  bool can_evaluate(const OpEvaluator& evaluator) const {
    return evaluator.can_evaluate(graph, graph.node(node));
  }
  Tensor evaluate(const OpEvaluator& evaluator) const {
    std::vector<Tensor> outputs = evaluator.evaluate(graph, graph.node(node), inputs);
    EXPECT_EQ(outputs.size(), 1u);
    return outputs.at(0);
  }
};

Tensor i64s(std::vector<std::int64_t> values, Shape shape) {
  return Tensor::from_vector(values, std::move(shape));
}

std::vector<std::int64_t> ints(const Tensor& tensor) {
  return std::vector<std::int64_t>(tensor.data<std::int64_t>(),
                                   tensor.data<std::int64_t>() + tensor.numel());
}

Attributes with(const std::string& name, AttributeValue value) {
  Attributes attributes;
  attributes.set(name, std::move(value));
  return attributes;
}

const TensorType kFourInts{DType::kInt64, {4}};

TEST(ShapeArithmeticTest, IntegerModTakesTheSignOfTheDivisor) {
  OneNode mod("Mod", {i64s({-7, 7, -7, 7}, {4}), i64s({3, 3, -3, -3}, {4})}, kFourInts);
  ShapeArithmeticEvaluator evaluator(nullptr);
  ASSERT_TRUE(mod.can_evaluate(evaluator));
  EXPECT_EQ(ints(mod.evaluate(evaluator)), (std::vector<std::int64_t>{2, 1, -1, -2}));
}

TEST(ShapeArithmeticTest, ModWithFmodTakesTheSignOfTheDividend) {
  OneNode mod("Mod", {i64s({-7, 7, -7, 7}, {4}), i64s({3, 3, -3, -3}, {4})}, kFourInts,
              with("fmod", std::int64_t{1}));
  EXPECT_EQ(ints(mod.evaluate(ShapeArithmeticEvaluator(nullptr))),
            (std::vector<std::int64_t>{-1, 1, -1, 1}));
}

TEST(ShapeArithmeticTest, FloatModTakesTheSignOfTheDivisor) {
  OneNode mod("Mod",
              {Tensor::from_vector<float>({-7.5f, 7.5f}, {2}), Tensor::from_vector<float>({2}, {})},
              TensorType{DType::kFloat32, {2}}, with("fmod", std::int64_t{0}));
  Tensor out = mod.evaluate(ShapeArithmeticEvaluator(nullptr));
  EXPECT_FLOAT_EQ(out.data<float>()[0], 0.5f);
  EXPECT_FLOAT_EQ(out.data<float>()[1], 1.5f);
}

TEST(ShapeArithmeticTest, ModBroadcastsItsOperands) {
  OneNode mod("Mod", {i64s({5, 6, 7, 8, 9, 10}, {2, 3}), i64s({4, 5}, {2, 1})},
              TensorType{DType::kInt64, {2, 3}});
  EXPECT_EQ(ints(mod.evaluate(ShapeArithmeticEvaluator(nullptr))),
            (std::vector<std::int64_t>{1, 2, 3, 3, 4, 0}));
}

TEST(ShapeArithmeticTest, IntegerModByZeroIsAnErrorNamingTheNode) {
  OneNode mod("Mod", {i64s({5}, {1}), i64s({0}, {1})}, TensorType{DType::kInt64, {1}});
  try {
    mod.evaluate(ShapeArithmeticEvaluator(nullptr));
    FAIL() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.where().node, "the_node");
    EXPECT_EQ(error.message(), "Mod by zero");
  }
}

TEST(ShapeArithmeticTest, ScatterNDReplacesTheNamedRowsAndALaterUpdateWins) {
  OneNode scatter("ScatterND",
                  {i64s({0, 0, 0, 0, 0, 0}, {3, 2}), i64s({0, -1, 0}, {3, 1}),
                   i64s({1, 2, 3, 4, 5, 6}, {3, 2})},
                  TensorType{DType::kInt64, {3, 2}});
  ShapeArithmeticEvaluator evaluator(nullptr);
  ASSERT_TRUE(scatter.can_evaluate(evaluator));
  EXPECT_EQ(ints(scatter.evaluate(evaluator)), (std::vector<std::int64_t>{5, 6, 0, 0, 3, 4}));
}

TEST(ShapeArithmeticTest, AScatterNDIndexOutOfRangeIsAnErrorNamingTheNode) {
  OneNode scatter("ScatterND", {i64s({0, 0, 0}, {3}), i64s({3}, {1, 1}), i64s({9}, {1})},
                  TensorType{DType::kInt64, {3}});
  try {
    scatter.evaluate(ShapeArithmeticEvaluator(nullptr));
    FAIL() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.where().node, "the_node");
    EXPECT_EQ(error.message(), "ScatterND index out of range");
  }
}

TEST(ShapeArithmeticTest, ScatterElementsReplacesElementsAlongItsAxis) {
  OneNode scatter("ScatterElements",
                  {i64s({0, 0, 0, 0, 0, 0}, {2, 3}), i64s({-1, 0}, {2, 1}), i64s({7, 8}, {2, 1})},
                  TensorType{DType::kInt64, {2, 3}}, with("axis", std::int64_t{1}));
  EXPECT_EQ(ints(scatter.evaluate(ShapeArithmeticEvaluator(nullptr))),
            (std::vector<std::int64_t>{0, 0, 7, 8, 0, 0}));
}

TEST(ShapeArithmeticTest, ScattersWithAReductionOrIntegerIndicesOfAnotherWidthAreNotItsOwn) {
  ShapeArithmeticEvaluator evaluator(nullptr);
  const TensorType out{DType::kInt64, {3}};
  OneNode adding("ScatterND", {i64s({0, 0, 0}, {3}), i64s({1}, {1, 1}), i64s({9}, {1})}, out,
                 with("reduction", std::string("add")));
  EXPECT_FALSE(adding.can_evaluate(evaluator));
  OneNode narrow(
      "ScatterND",
      {i64s({0, 0, 0}, {3}), Tensor::from_vector<std::int32_t>({1}, {1, 1}), i64s({9}, {1})}, out);
  EXPECT_FALSE(narrow.can_evaluate(evaluator));
}

TEST(ShapeArithmeticTest, WithoutKernelsOnlyItsOwnOpsAreEvaluated) {
  OneNode add("Add", {i64s({1}, {1}), i64s({2}, {1})}, TensorType{DType::kInt64, {1}});
  EXPECT_FALSE(add.can_evaluate(ShapeArithmeticEvaluator(nullptr)));
}

TEST(ShapeArithmeticTest, WhatTheKernelsCanEvaluateTheyEvaluate) {
  OneNode add("Add", {i64s({1}, {1}), i64s({2}, {1})}, TensorType{DType::kInt64, {1}});
  ShapeOpsEvaluator kernels;
  ShapeArithmeticEvaluator evaluator(&kernels);
  ASSERT_TRUE(add.can_evaluate(evaluator));
  EXPECT_EQ(ints(add.evaluate(evaluator)), (std::vector<std::int64_t>{3}));
  EXPECT_EQ(kernels.evaluations, 1);
}

}  // namespace
}  // namespace collage
