// fuse_layer_norm: the ReduceMean/Sub/Pow/Sqrt/Div chain of a layer
// normalization over trailing axes becomes one LayerNormalization.
#include "collage/ir/passes/fuse_layer_norm.h"

#include <gtest/gtest.h>

#include "ir/passes/passes_test_util.h"

namespace collage {
namespace {

using testing::f32;
using testing::f32_constant;
using testing::floats;
using testing::node_writing;

// (x - mean(x)) / sqrt(mean((x - mean(x))^2) + epsilon) over `axes` of
// x[2,3,4], written into "normalized".
struct LayerNormChain {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 3, 4}));
  ValueId normalized = g.add_value("normalized", f32({2, 3, 4}));

  LayerNormChain(const std::vector<std::int64_t>& axes, float epsilon) {
    Attributes reduce;
    reduce.set("axes", axes);
    Shape reduced = {2, 3, 4};
    for (std::int64_t axis : axes)
      reduced[static_cast<std::size_t>(axis < 0 ? axis + 3 : axis)] = 1;
    ValueId mean = g.add_value("mean", f32(reduced));
    ValueId d = g.add_value("d", f32({2, 3, 4}));
    ValueId square = g.add_value("square", f32({2, 3, 4}));
    ValueId variance = g.add_value("variance", f32(reduced));
    ValueId shifted = g.add_value("shifted", f32(reduced));
    ValueId deviation = g.add_value("deviation", f32(reduced));
    g.add_node("ReduceMean", {x}, {mean}, reduce);
    g.add_node("Sub", {x, mean}, {d});
    g.add_node("Pow", {d, f32_constant(g, "two", {2}, {})}, {square});
    g.add_node("ReduceMean", {square}, {variance}, reduce);
    g.add_node("Add", {variance, f32_constant(g, "epsilon", {epsilon}, {})}, {shifted});
    g.add_node("Sqrt", {shifted}, {deviation});
    g.add_node("Div", {d, deviation}, {normalized});
  }
};

TEST(FuseLayerNormTest, TheFusedNodeStartsAtTheFirstReducedAxisAndKeepsEpsilon) {
  LayerNormChain chain({-2, -1}, 1e-3f);
  chain.g.add_output(chain.normalized);
  EXPECT_EQ(fuse_layer_norm(chain.g), 1);
  ASSERT_EQ(chain.g.num_nodes(), 1u);
  const Node& norm = node_writing(chain.g, "normalized");
  EXPECT_EQ(norm.op_type, "LayerNormalization");
  EXPECT_EQ(norm.attributes.get_int("axis"), 1);
  EXPECT_FLOAT_EQ(norm.attributes.get_float("epsilon"), 1e-3f);
  // Without a scale after it the chain scales by ones, and has no bias.
  ASSERT_EQ(norm.inputs.size(), 2u);
  const Tensor& gamma = *chain.g.value(norm.inputs[1]).constant;
  EXPECT_EQ(gamma.shape(), (Shape{3, 4}));
  EXPECT_EQ(floats(gamma), std::vector<float>(12, 1.0f));
}

TEST(FuseLayerNormTest, AScaleAndShiftAfterTheChainBecomeGammaAndBetaOfTheNormalizedShape) {
  LayerNormChain chain({-2, -1}, 1e-5f);
  Graph& g = chain.g;
  ValueId scaled = g.add_value("scaled", f32({2, 3, 4}));
  ValueId y = g.add_value("y", f32({2, 3, 4}));
  g.add_node("Mul", {chain.normalized, f32_constant(g, "scale", {1, 2, 3, 4}, {4})}, {scaled});
  g.add_node("Add", {scaled, f32_constant(g, "bias", {5, 6, 7}, {3, 1})}, {y});
  g.add_output(y);
  EXPECT_EQ(fuse_layer_norm(g), 1);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Node& norm = node_writing(g, "y");
  ASSERT_EQ(norm.inputs.size(), 3u);
  EXPECT_EQ(floats(*g.value(norm.inputs[1]).constant),
            (std::vector<float>{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}));
  EXPECT_EQ(floats(*g.value(norm.inputs[2]).constant),
            (std::vector<float>{5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7}));
}

TEST(FuseLayerNormTest, AChainOverALeadingAxisStays) {
  LayerNormChain chain({0}, 1e-5f);
  chain.g.add_output(chain.normalized);
  EXPECT_EQ(fuse_layer_norm(chain.g), 0);
  EXPECT_EQ(chain.g.num_nodes(), 7u);
}

}  // namespace
}  // namespace collage
