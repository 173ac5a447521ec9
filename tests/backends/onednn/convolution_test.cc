#include "collage/backends/onednn/convolution.h"

#include <gtest/gtest.h>

#include "backends/onednn/onednn_test_util.h"

namespace collage::onednn_test {
namespace {

struct ConvCase {
  std::string name;
  Shape input;            // N, C, spatial...
  std::int64_t channels;  // output channels
  Shape kernel;
  std::int64_t group = 1;
  std::vector<std::int64_t> strides = {};
  std::vector<std::int64_t> pads = {};
  std::vector<std::int64_t> dilations = {};
  std::string auto_pad = "NOTSET";
  bool bias = true;
  bool constant_weights = true;
};

std::vector<std::int64_t> or_fill(std::vector<std::int64_t> v, std::size_t n, std::int64_t x) {
  return v.empty() ? std::vector<std::int64_t>(n, x) : v;
}

Graph conv_graph(const ConvCase& c) {
  GraphBuilder b;
  const std::size_t sp = c.kernel.size();
  const auto strides = or_fill(c.strides, sp, 1);
  const auto dilations = or_fill(c.dilations, sp, 1);
  const auto pads = or_fill(c.pads, 2 * sp, 0);
  Shape out = {c.input[0], c.channels};
  for (std::size_t i = 0; i < sp; ++i) {
    const std::int64_t in = c.input[2 + i];
    const std::int64_t extent = (c.kernel[i] - 1) * dilations[i] + 1;
    if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      out.push_back((in + strides[i] - 1) / strides[i]);
    } else if (c.auto_pad == "VALID") {
      out.push_back((in - extent) / strides[i] + 1);
    } else {
      out.push_back((in + pads[i] + pads[i + sp] - extent) / strides[i] + 1);
    }
  }
  Shape w_shape = {c.channels, c.input[1] / c.group};
  w_shape.insert(w_shape.end(), c.kernel.begin(), c.kernel.end());
  ValueId x = b.input(c.input);
  ValueId w = c.constant_weights ? b.weights(w_shape) : b.input(w_shape);
  std::vector<ValueId> inputs = {x, w};
  if (c.bias) inputs.push_back(b.weights({c.channels}));
  Attributes a = attrs({{"group", c.group}, {"strides", strides}, {"dilations", dilations}});
  if (c.auto_pad == "NOTSET") {
    a.set("pads", pads);
  } else {
    a.set("auto_pad", c.auto_pad);
  }
  b.output(b.node("Conv", inputs, out, a));
  return b.graph();
}

class ConvTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvTest, MatchesTheReference) {
  Graph graph = conv_graph(GetParam());
  const Node& conv = graph.node(0);
  EXPECT_TRUE(onednn_backend().supports(graph, conv));
  EXPECT_TRUE(matches_reference(graph));
}

INSTANTIATE_TEST_SUITE_P(
    Grid, ConvTest,
    ::testing::Values(
        ConvCase{"Same3x3", {2, 5, 9, 11}, 7, {3, 3}, 1, {}, {1, 1, 1, 1}},
        ConvCase{"Stride2AsymmetricPads", {1, 4, 10, 9}, 8, {3, 3}, 1, {2, 2}, {0, 1, 1, 0}},
        ConvCase{"Dilation2", {1, 3, 12, 12}, 5, {3, 3}, 1, {}, {2, 2, 2, 2}, {2, 2}},
        ConvCase{
            "MixedStridesAndDilations", {1, 6, 13, 10}, 4, {3, 2}, 1, {2, 1}, {1, 0, 2, 1}, {1, 2}},
        ConvCase{"TwoGroups", {2, 6, 7, 7}, 4, {3, 3}, 2, {}, {1, 1, 1, 1}},
        ConvCase{"Depthwise", {1, 16, 9, 9}, 16, {3, 3}, 16, {1, 1}, {1, 1, 1, 1}},
        ConvCase{"DepthwiseStride2", {1, 8, 10, 10}, 8, {5, 5}, 8, {2, 2}, {2, 2, 2, 2}},
        ConvCase{"Pointwise", {1, 32, 5, 5}, 24, {1, 1}},
        ConvCase{"FirstLayer7x7", {1, 3, 32, 32}, 16, {7, 7}, 1, {2, 2}, {3, 3, 3, 3}},
        ConvCase{"SameUpper", {1, 4, 9, 8}, 6, {3, 3}, 1, {2, 2}, {}, {}, "SAME_UPPER"},
        ConvCase{"SameLowerEvenKernel", {1, 4, 9, 8}, 6, {4, 4}, 1, {2, 2}, {}, {}, "SAME_LOWER"},
        ConvCase{"Valid", {1, 4, 9, 8}, 6, {3, 2}, 1, {2, 1}, {}, {}, "VALID"},
        ConvCase{"NoBias", {1, 8, 6, 6}, 8, {3, 3}, 1, {}, {1, 1, 1, 1}, {}, "NOTSET", false},
        ConvCase{"RuntimeWeights",
                 {1, 8, 6, 6},
                 8,
                 {3, 3},
                 2,
                 {},
                 {1, 1, 1, 1},
                 {},
                 "NOTSET",
                 true,
                 false},
        ConvCase{"OneSpatialDim", {2, 5, 17}, 7, {3}, 1, {2}, {1, 1}},
        ConvCase{"ThreeSpatialDims", {1, 4, 5, 6, 7}, 8, {3, 3, 3}, 1, {}, {1, 1, 1, 1, 1, 1}},
        ConvCase{"OddChannels", {3, 17, 5, 7}, 19, {3, 1}, 1, {1, 1}, {1, 0, 1, 0}}),
    [](const ::testing::TestParamInfo<ConvCase>& info) { return info.param.name; });

struct DeconvCase {
  std::string name;
  Shape input;
  std::int64_t channels;
  Shape kernel;
  std::int64_t group = 1;
  std::vector<std::int64_t> strides = {};
  std::vector<std::int64_t> pads = {};
  std::vector<std::int64_t> dilations = {};
  std::vector<std::int64_t> output_padding = {};
  bool use_output_shape = false;
  std::string auto_pad = "NOTSET";
};

Graph deconv_graph(const DeconvCase& c) {
  GraphBuilder b;
  const std::size_t sp = c.kernel.size();
  const auto strides = or_fill(c.strides, sp, 1);
  const auto dilations = or_fill(c.dilations, sp, 1);
  const auto pads = or_fill(c.pads, 2 * sp, 0);
  const auto output_padding = or_fill(c.output_padding, sp, 0);
  Shape out = {c.input[0], c.channels};
  for (std::size_t i = 0; i < sp; ++i) {
    const bool same = c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER";
    out.push_back(same ? c.input[2 + i] * strides[i]
                       : strides[i] * (c.input[2 + i] - 1) + output_padding[i] +
                             (c.kernel[i] - 1) * dilations[i] + 1 - pads[i] - pads[i + sp]);
  }
  Shape w_shape = {c.input[1], c.channels / c.group};
  w_shape.insert(w_shape.end(), c.kernel.begin(), c.kernel.end());
  Attributes a = attrs({{"group", c.group},
                        {"strides", strides},
                        {"dilations", dilations},
                        {"output_padding", output_padding}});
  if (c.use_output_shape) {
    a.set("output_shape", std::vector<std::int64_t>(out.begin() + 2, out.end()));
  } else if (c.auto_pad != "NOTSET") {
    a.set("auto_pad", c.auto_pad);
  } else {
    a.set("pads", pads);
  }
  b.output(b.node("ConvTranspose", {b.input(c.input), b.weights(w_shape), b.weights({c.channels})},
                  out, a));
  return b.graph();
}

class ConvTransposeTest : public ::testing::TestWithParam<DeconvCase> {};

TEST_P(ConvTransposeTest, MatchesTheReference) {
  Graph graph = deconv_graph(GetParam());
  EXPECT_TRUE(onednn_backend().supports(graph, graph.node(0)));
  EXPECT_TRUE(matches_reference(graph));
}

INSTANTIATE_TEST_SUITE_P(
    Grid, ConvTransposeTest,
    ::testing::Values(
        DeconvCase{"Plain3x3", {1, 4, 6, 7}, 5, {3, 3}, 1, {}, {1, 1, 1, 1}},
        DeconvCase{"Stride2", {2, 6, 5, 5}, 4, {4, 4}, 1, {2, 2}, {1, 1, 1, 1}},
        DeconvCase{"OutputPadding", {1, 3, 5, 6}, 4, {3, 3}, 1, {2, 2}, {1, 1, 1, 1}, {}, {1, 1}},
        DeconvCase{"TwoGroups", {1, 6, 5, 5}, 8, {3, 3}, 2, {2, 2}, {0, 0, 0, 0}},
        DeconvCase{"Dilated", {1, 4, 5, 5}, 3, {3, 3}, 1, {1, 1}, {0, 0, 0, 0}, {2, 2}},
        DeconvCase{
            "FromOutputShape", {1, 4, 5, 5}, 3, {3, 3}, 1, {2, 2}, {1, 1, 1, 1}, {}, {1, 1}, true},
        DeconvCase{"OneSpatialDim", {2, 5, 9}, 3, {4}, 1, {3}, {1, 2}},
        DeconvCase{
            "SameUpper", {1, 4, 5, 6}, 3, {4, 3}, 1, {2, 2}, {}, {}, {}, false, "SAME_UPPER"},
        DeconvCase{
            "SameLower", {1, 4, 5, 6}, 3, {4, 3}, 1, {2, 2}, {}, {}, {}, false, "SAME_LOWER"}),
    [](const ::testing::TestParamInfo<DeconvCase>& info) { return info.param.name; });

// oneDNN's Winograd kernels (on machines with AVX-512) transform 4x4 or 6x6
// tiles; sizes that are not a multiple of the tile leave partial tiles at
// the edges. Each case must match the reference when Winograd runs wherever
// it can, with and without a fused Relu.
TEST(ConvWinogradTest, MatchesTheReferenceWhereverItRuns) {
  onednn::set_winograd_policy(onednn::WinogradPolicy::kWhenAvailable);
  for (const ConvCase& c :
       {ConvCase{"Tiles", {1, 32, 16, 16}, 32, {3, 3}, 1, {}, {1, 1, 1, 1}},
        ConvCase{"PartialTiles", {1, 16, 13, 11}, 48, {3, 3}, 1, {}, {1, 1, 1, 1}},
        ConvCase{"Unpadded", {1, 64, 9, 9}, 16, {3, 3}},
        ConvCase{
            "NoBias", {1, 24, 10, 10}, 40, {3, 3}, 1, {}, {1, 1, 1, 1}, {}, "NOTSET", false}}) {
    EXPECT_TRUE(matches_reference(conv_graph(c), 2)) << c.name;
  }
  GraphBuilder b;
  ValueId x = b.input({1, 32, 12, 12});
  ValueId y = b.node("Conv", {x, b.weights({32, 32, 3, 3}), b.weights({32})}, {1, 32, 12, 12},
                     attrs({{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}}));
  b.output(b.node("Relu", {y}, {1, 32, 12, 12}));
  EXPECT_TRUE(matches_reference(b.graph(), 2)) << "with a Relu";
  onednn::set_winograd_policy(onednn::WinogradPolicy::kWhenFaster);
}

TEST(ConvSupportTest, RejectsIntegerInputs) {
  GraphBuilder b;
  Graph& g = b.graph();
  ValueId x = g.add_input("xi", TensorType{DType::kInt32, {1, 2, 4, 4}});
  ValueId y = b.node("Conv", {x, b.weights({2, 2, 1, 1})}, {1, 2, 4, 4});
  b.output(y);
  EXPECT_FALSE(onednn_backend().supports(g, g.node(0)));
  EXPECT_NE(compile_failure(g), "");
}

TEST(ConvSupportTest, RejectsAnOutputShapeThatDisagreesWithTheAttributes) {
  GraphBuilder b;
  ValueId y = b.node("Conv", {b.input({1, 2, 8, 8}), b.weights({4, 2, 3, 3})}, {1, 4, 8, 8});
  b.output(y);
  EXPECT_FALSE(onednn_backend().supports(b.graph(), b.graph().node(0)));
  EXPECT_NE(compile_failure(b.graph()).find("output shape"), std::string::npos);
}

}  // namespace
}  // namespace collage::onednn_test
