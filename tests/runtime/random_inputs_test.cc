#include "collage/runtime/random_inputs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>

#include "collage/ir/passes/partial_type.h"

namespace collage {
namespace {

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.type() == b.type() && std::memcmp(a.raw(), b.raw(), a.byte_size()) == 0;
}

TEST(RandomInputsTest, SameSeedAndNameGiveTheSameData) {
  TensorType type{DType::kFloat32, {64}};
  EXPECT_TRUE(same_bytes(random_tensor(type, "x"), random_tensor(type, "x")));
}

TEST(RandomInputsTest, DifferentNamesGiveDifferentData) {
  TensorType type{DType::kFloat32, {64}};
  EXPECT_FALSE(same_bytes(random_tensor(type, "x"), random_tensor(type, "y")));
}

TEST(RandomInputsTest, DifferentSeedsGiveDifferentData) {
  TensorType type{DType::kFloat32, {64}};
  EXPECT_FALSE(
      same_bytes(random_tensor(type, "x", {.seed = 1}), random_tensor(type, "x", {.seed = 2})));
}

TEST(RandomInputsTest, UniformFloatsLieInMinusOneToOne) {
  Tensor t = random_tensor(TensorType{DType::kFloat32, {10000}}, "x");
  const float* data = t.data<float>();
  auto [lo, hi] = std::minmax_element(data, data + t.numel());
  EXPECT_GE(*lo, -1.0f);
  EXPECT_LT(*hi, 1.0f);
  // Both halves of the range are used.
  EXPECT_LT(*lo, -0.9f);
  EXPECT_GT(*hi, 0.9f);
}

TEST(RandomInputsTest, NormalFloatsHaveUnitVariance) {
  Tensor t = random_tensor(TensorType{DType::kFloat64, {20000}}, "x",
                           {.floats = FloatDistribution::kNormal});
  double sum = 0;
  double squares = 0;
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    sum += t.data<double>()[i];
    squares += t.data<double>()[i] * t.data<double>()[i];
  }
  double mean = sum / static_cast<double>(t.numel());
  double variance = squares / static_cast<double>(t.numel()) - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_NEAR(variance, 1.0, 0.05);
}

TEST(RandomInputsTest, IntegersLieInZeroToBound) {
  Tensor t = random_tensor(TensorType{DType::kInt64, {1000}}, "ids", {.int_bound = 7});
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    ASSERT_GE(t.int_at(i), 0);
    ASSERT_LT(t.int_at(i), 7);
  }
}

TEST(RandomInputsTest, BoolsAreZeroOrOne) {
  Tensor t = random_tensor(TensorType{DType::kBool, {256}}, "mask");
  int ones = 0;
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    ASSERT_TRUE(t.int_at(i) == 0 || t.int_at(i) == 1);
    ones += static_cast<int>(t.int_at(i));
  }
  EXPECT_GT(ones, 0);
  EXPECT_LT(ones, 256);
}

// ids (i64[32]) index rows of a 10-row table.
Graph embedding_lookup() {
  Graph g;
  ValueId table = g.add_constant("table", Tensor::zeros(TensorType{DType::kFloat32, {10, 4}}));
  ValueId ids = g.add_input("ids", TensorType{DType::kInt64, {32}});
  ValueId rows = g.add_value("rows", TensorType{DType::kFloat32, {32, 4}});
  g.add_node("Gather", {table, ids}, {rows});
  g.add_output(rows);
  return g;
}

TEST(RandomInputsTest, GatherIndicesStayWithinTheGatheredAxis) {
  Graph g = embedding_lookup();
  EXPECT_EQ(index_bound(g, *g.find_value("ids"), 100), 10);
  auto inputs = random_inputs(g);
  const Tensor& ids = inputs.at("ids");
  for (std::int64_t i = 0; i < ids.numel(); ++i) {
    ASSERT_GE(ids.int_at(i), 0);
    ASSERT_LT(ids.int_at(i), 10);
  }
}

// Index tuples address as many axes as they are long: each stays under the
// smallest of those (ScatterND's over data [7, 5, 9]: 5), and a scatter
// along an axis under that axis.
TEST(RandomInputsTest, ScatterAndTupleIndicesStayWithinTheAxesTheyAddress) {
  Graph g;
  ValueId data = g.add_input("data", TensorType{DType::kFloat32, {7, 5, 9}});
  ValueId tuples = g.add_input("tuples", TensorType{DType::kInt64, {3, 2}});
  ValueId rows = g.add_input("rows", TensorType{DType::kFloat32, {3, 9}});
  ValueId scattered = g.add_value("scattered", TensorType{DType::kFloat32, {7, 5, 9}});
  g.add_node("ScatterND", {data, tuples, rows}, {scattered});
  ValueId along = g.add_input("along", TensorType{DType::kInt64, {7, 5, 2}});
  ValueId updates = g.add_input("updates", TensorType{DType::kFloat32, {7, 5, 2}});
  ValueId elements = g.add_value("elements", TensorType{DType::kFloat32, {7, 5, 9}});
  Attributes last_axis;
  last_axis.set("axis", std::int64_t{-1});
  g.add_node("ScatterElements", {scattered, along, updates}, {elements}, last_axis);
  g.add_output(elements);
  EXPECT_EQ(index_bound(g, tuples, 100), 5);
  EXPECT_EQ(index_bound(g, along, 100), 9);
  EXPECT_EQ(index_bound(g, data, 100), 100);
}

TEST(RandomInputsTest, RandomInputsCoverEveryGraphInputWithItsType) {
  Graph g = embedding_lookup();
  auto inputs = random_inputs(g);
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs.at("ids").type(), (TensorType{DType::kInt64, {32}}));
}

// A branch reading its one captured input, f32[2]: Relu of it, typed or
// (a branch that cannot be typed for the graph's shapes) of unknown type.
Subgraph relu_branch(bool typed) {
  auto body = std::make_shared<Graph>();
  const TensorType type = typed ? TensorType{DType::kFloat32, {2}} : unknown_type();
  ValueId in = body->add_input("inner_x", type);
  body->captured = 1;
  ValueId out = body->add_value("out", type);
  body->add_node("Relu", {in}, {out});
  body->add_output(out);
  return body;
}

// x -> If(cond; then typed as `then_typed`, else as `else_typed`) -> y,
// `cond` made by `make_condition` from the graph's other inputs.
Graph graph_with_if(bool then_typed, bool else_typed,
                    const std::function<ValueId(Graph&)>& make_condition) {
  Graph g;
  ValueId x = g.add_input("x", TensorType{DType::kFloat32, {2}});
  ValueId cond = make_condition(g);
  ValueId y = g.add_value("y", TensorType{DType::kFloat32, {2}});
  Attributes branches;
  branches.set("then_branch", relu_branch(then_typed));
  branches.set("else_branch", relu_branch(else_typed));
  g.add_node("If", {cond, x}, {y}, branches, "rate");
  g.add_output(y);
  return g;
}

// sr (i64 scalar) == 16000
ValueId rate_is_16k(Graph& g) {
  ValueId sr = g.add_input("sr", TensorType{DType::kInt64, {}});
  ValueId rate = g.add_constant("rate", Tensor::from_vector<std::int64_t>({16000}, {}));
  ValueId cond = g.add_value("cond", TensorType{DType::kBool, {}});
  g.add_node("Equal", {sr, rate}, {cond});
  return cond;
}

TEST(RandomInputsTest, ASampleRateComparedToAConstantTakesTheBranchThatCanRun) {
  EXPECT_EQ(random_inputs(graph_with_if(true, false, rate_is_16k)).at("sr").int_at(0), 16000);
  EXPECT_EQ(random_inputs(graph_with_if(false, true, rate_is_16k)).at("sr").int_at(0), 16001);
}

TEST(RandomInputsTest, ABoolConditionThroughANotTakesTheBranchThatCanRun) {
  auto negated = [](Graph& g) {
    ValueId flag = g.add_input("flag", TensorType{DType::kBool, {1}});
    ValueId cond = g.add_value("cond", TensorType{DType::kBool, {1}});
    g.add_node("Not", {flag}, {cond});
    return cond;
  };
  EXPECT_EQ(random_inputs(graph_with_if(true, false, negated)).at("flag").int_at(0), 0);
  EXPECT_EQ(random_inputs(graph_with_if(false, true, negated)).at("flag").int_at(0), 1);
}

TEST(RandomInputsTest, AConditionStaysRandomWhenBothBranchesCanRun) {
  Graph g = graph_with_if(true, true, rate_is_16k);
  EXPECT_LT(random_inputs(g).at("sr").int_at(0), 100);
}

}  // namespace
}  // namespace collage
