// fuse_activations: Gelu, Swish, HardSigmoid and HardSwish written out as
// chains of elementwise ops become ONNX's single op.
#include "collage/ir/passes/fuse_activations.h"

#include <gtest/gtest.h>

#include "ir/passes/passes_test_util.h"

namespace collage {
namespace {

using testing::f32;
using testing::f32_constant;
using testing::node_writing;

// Builds x[2,4] and elementwise float32 nodes over it, naming values v1, v2...
class Chain {
 public:
  Chain() : x_(graph_.add_input("x", f32({2, 4}))) {}

  ValueId x() const { return x_; }
  ValueId scalar(float value) { return f32_constant(graph_, next_name("c"), {value}, {}); }
  ValueId op(const std::string& op_type, std::vector<ValueId> inputs, Attributes attributes = {}) {
    ValueId out = graph_.add_value(next_name("v"), f32({2, 4}));
    graph_.add_node(op_type, std::move(inputs), {out}, std::move(attributes));
    return out;
  }
  // Makes `out` the graph's output and returns the graph.
  Graph& finish(ValueId out) {
    graph_.add_output(out);
    return graph_;
  }

 private:
  std::string next_name(const std::string& prefix) { return prefix + std::to_string(++count_); }

  Graph graph_;
  ValueId x_;
  int count_ = 0;
};

TEST(FuseActivationsTest, TheErfFormOfGeluBecomesGeluWithoutApproximation) {
  Chain c;
  ValueId erf = c.op("Erf", {c.op("Div", {c.x(), c.scalar(1.4142135f)})});
  ValueId one_plus = c.op("Add", {erf, c.scalar(1.0f)});
  ValueId y = c.op("Mul", {c.op("Mul", {c.x(), one_plus}), c.scalar(0.5f)});
  Graph& g = c.finish(y);
  const std::string name = g.value(y).name;
  EXPECT_EQ(fuse_gelu(g), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Node& gelu = node_writing(g, name);
  EXPECT_EQ(gelu.op_type, "Gelu");
  EXPECT_EQ(gelu.attributes.get_string("approximate"), "none");
  EXPECT_EQ(g.value(gelu.inputs[0]).name, "x");
}

TEST(FuseActivationsTest, XTimesTheSigmoidOfAnotherValueIsNotSwish) {
  Chain c;
  ValueId other = c.op("Relu", {c.x()});
  Graph& g = c.finish(c.op("Mul", {c.x(), c.op("Sigmoid", {other})}));
  EXPECT_EQ(fuse_swish(g), 0);
  EXPECT_EQ(g.num_nodes(), 3u);
}

TEST(FuseActivationsTest, AClipOfAShiftScaledByItsMaximumBecomesHardSigmoid) {
  Chain c;
  ValueId clip =
      c.op("Clip", {c.op("Add", {c.x(), c.scalar(1.0f)}), c.scalar(0.0f), c.scalar(2.0f)});
  // Multiplying by 1/2 is dividing by the maximum 2.
  ValueId y = c.op("Mul", {c.scalar(0.5f), clip});
  Graph& g = c.finish(y);
  EXPECT_EQ(fuse_hard_sigmoid(g), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Node& hard = g.node(0);
  EXPECT_EQ(hard.op_type, "HardSigmoid");
  EXPECT_FLOAT_EQ(hard.attributes.get_float("alpha"), 0.5f);
  EXPECT_FLOAT_EQ(hard.attributes.get_float("beta"), 0.5f);
}

TEST(FuseActivationsTest, XTimesAHardSigmoidWithOnnxDefaultsIsNotHardSwish) {
  // ONNX's default HardSigmoid slope is 0.2, HardSwish's is 1/6.
  Chain c;
  Graph& g = c.finish(c.op("Mul", {c.x(), c.op("HardSigmoid", {c.x()})}));
  EXPECT_EQ(fuse_hard_swish(g), 0);
  EXPECT_EQ(g.num_nodes(), 2u);
}

TEST(FuseActivationsTest, XTimesTheHardSigmoidOfHardSwishBecomesHardSwish) {
  Chain c;
  Attributes sixth;
  sixth.set("alpha", 1 / 6.0f);
  Graph& g = c.finish(c.op("Mul", {c.op("HardSigmoid", {c.x()}, sixth), c.x()}));
  EXPECT_EQ(fuse_hard_swish(g), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.node(0).op_type, "HardSwish");
  EXPECT_TRUE(g.node(0).attributes.empty());
  EXPECT_EQ(g.value(g.node(0).inputs[0]).name, "x");
}

}  // namespace
}  // namespace collage
