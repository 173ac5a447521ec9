// Conv on the openblas backend (im2col + sgemm), against naive loops.
#include <gtest/gtest.h>

#include "backends/openblas/naive_reference.h"
#include "backends/openblas/openblas_test_util.h"
#include "collage/backends/openblas/im2col_conv.h"

namespace collage::openblas_test {
namespace {

struct ConvCase {
  Shape x;  // [N, C, H, W]
  Shape w;  // [M, C/g, kh, kw]
  NaiveConv p;
  bool bias = true;
};

std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d,
                      std::int64_t pb, std::int64_t pe) {
  return (in + pb + pe - ((k - 1) * d + 1)) / s + 1;
}

Shape conv_output(const ConvCase& c) {
  return {c.x[0], c.w[0],
          out_size(c.x[2], c.w[2], c.p.stride_h, c.p.dilation_h, c.p.pad_top, c.p.pad_bottom),
          out_size(c.x[3], c.w[3], c.p.stride_w, c.p.dilation_w, c.p.pad_left, c.p.pad_right)};
}

// Weights and bias are constants, as in an imported model.
Graph conv_graph(const ConvCase& c) {
  Graph graph;
  ValueId x = graph.add_input("x", f32(c.x));
  ValueId w = graph.add_constant("w", random_constant(f32(c.w), "w"));
  std::vector<ValueId> inputs = {x, w};
  if (c.bias) inputs.push_back(graph.add_constant("b", random_constant(f32({c.w[0]}), "b")));
  ValueId y = graph.add_value("y", f32(conv_output(c)));
  Attributes attrs;
  attrs.set("strides", std::vector<std::int64_t>{c.p.stride_h, c.p.stride_w});
  attrs.set("dilations", std::vector<std::int64_t>{c.p.dilation_h, c.p.dilation_w});
  attrs.set("pads",
            std::vector<std::int64_t>{c.p.pad_top, c.p.pad_left, c.p.pad_bottom, c.p.pad_right});
  attrs.set("group", c.p.groups);
  attrs.set("kernel_shape", std::vector<std::int64_t>{c.w[2], c.w[3]});
  graph.add_node("Conv", inputs, {y}, attrs);
  graph.add_output(y);
  return graph;
}

Tensor expected_conv(const Graph& graph, const std::vector<Tensor>& inputs, const ConvCase& c) {
  Tensor bias = c.bias ? *graph.value(*graph.find_value("b")).constant : Tensor{};
  return naive_conv2d(inputs[0], *graph.value(*graph.find_value("w")).constant, bias, c.p);
}

void expect_conv_matches(const ConvCase& c, int threads) {
  Graph graph = conv_graph(c);
  std::vector<Tensor> inputs = inputs_for(graph);
  EXPECT_TRUE(all_close(compile_and_run(graph, inputs, threads), expected_conv(graph, inputs, c)))
      << "x=" << shape_to_string(c.x) << " w=" << shape_to_string(c.w) << " stride " << c.p.stride_h
      << "x" << c.p.stride_w << " dilation " << c.p.dilation_h << "x" << c.p.dilation_w << " pads "
      << c.p.pad_top << "," << c.p.pad_left << "," << c.p.pad_bottom << "," << c.p.pad_right
      << " group " << c.p.groups << " threads " << threads;
}

TEST(OpenBlasConvTest, MatchesNaiveLoopsAcrossStridesPadsAndDilations) {
  for (std::int64_t stride : {1, 2, 3}) {
    for (std::int64_t dilation : {1, 2}) {
      for (std::int64_t pad : {0, 1, 2}) {
        ConvCase c{{1, 3, 9, 8}, {4, 3, 3, 3}, {}};
        c.p.stride_h = c.p.stride_w = stride;
        c.p.dilation_h = c.p.dilation_w = dilation;
        c.p.pad_top = c.p.pad_left = c.p.pad_bottom = c.p.pad_right = pad;
        expect_conv_matches(c, 1);
      }
    }
  }
}

TEST(OpenBlasConvTest, AsymmetricStridesPadsAndKernelsMatchNaiveLoops) {
  ConvCase c{{2, 2, 10, 7}, {3, 2, 3, 2}, {}};
  c.p.stride_h = 2;
  c.p.stride_w = 1;
  c.p.dilation_h = 1;
  c.p.dilation_w = 2;
  c.p.pad_top = 0;
  c.p.pad_left = 2;
  c.p.pad_bottom = 1;
  c.p.pad_right = 0;
  expect_conv_matches(c, 1);
  expect_conv_matches(c, 2);
}

TEST(OpenBlasConvTest, GroupedAndDepthwiseConvolutionsMatchNaiveLoops) {
  ConvCase grouped{{1, 8, 7, 7}, {6, 4, 3, 3}, {}};
  grouped.p.groups = 2;
  grouped.p.pad_top = grouped.p.pad_left = grouped.p.pad_bottom = grouped.p.pad_right = 1;
  ConvCase depthwise{{2, 6, 9, 9}, {6, 1, 3, 3}, {}};
  depthwise.p.groups = 6;
  depthwise.p.stride_h = depthwise.p.stride_w = 2;
  depthwise.p.pad_top = depthwise.p.pad_left = depthwise.p.pad_bottom = depthwise.p.pad_right = 1;
  ConvCase multiplier{{1, 4, 6, 6}, {8, 1, 3, 3}, {}};
  multiplier.p.groups = 4;
  for (int threads : {1, 2}) {
    expect_conv_matches(grouped, threads);
    expect_conv_matches(depthwise, threads);
    expect_conv_matches(multiplier, threads);
  }
}

TEST(OpenBlasConvTest, PointwiseConvolutionsReadTheInputWithoutIm2col) {
  ConvCase c{{2, 16, 5, 6}, {8, 16, 1, 1}, {}, /*bias=*/false};
  Graph graph = conv_graph(c);
  Result<openblas::ConvGeometry> geometry = openblas::analyze_conv(graph, graph.node(0));
  ASSERT_TRUE(geometry.ok()) << geometry.error();
  EXPECT_TRUE(geometry->pointwise());
  expect_conv_matches(c, 1);
  expect_conv_matches(c, 2);
}

TEST(OpenBlasConvTest, StridedPointwiseConvolutionsUseIm2col) {
  ConvCase c{{1, 8, 7, 7}, {4, 8, 1, 1}, {}};
  c.p.stride_h = c.p.stride_w = 2;
  Graph graph = conv_graph(c);
  Result<openblas::ConvGeometry> geometry = openblas::analyze_conv(graph, graph.node(0));
  ASSERT_TRUE(geometry.ok()) << geometry.error();
  EXPECT_FALSE(geometry->pointwise());
  expect_conv_matches(c, 1);
}

TEST(OpenBlasConvTest, LargerConvolutionOnTwoThreadsMatchesNaiveLoops) {
  ConvCase c{{1, 16, 20, 20}, {24, 16, 3, 3}, {}};
  c.p.pad_top = c.p.pad_left = c.p.pad_bottom = c.p.pad_right = 1;
  expect_conv_matches(c, 2);
}

TEST(OpenBlasConvTest, AutoPadSameUpperAndLowerMatchTheirExplicitPads) {
  // in 7, kernel 4, stride 2: out 4, total pad (4-1)*2+4-7 = 3.
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    const bool upper = std::string(mode) == "SAME_UPPER";
    ConvCase c{{1, 2, 7, 7}, {3, 2, 4, 4}, {}};
    c.p.stride_h = c.p.stride_w = 2;
    c.p.pad_top = c.p.pad_left = upper ? 1 : 2;
    c.p.pad_bottom = c.p.pad_right = upper ? 2 : 1;
    Graph graph = conv_graph(c);
    Node& node = graph.node(0);
    node.attributes.erase("pads");
    node.attributes.set("auto_pad", std::string(mode));
    std::vector<Tensor> inputs = inputs_for(graph);
    EXPECT_TRUE(all_close(compile_and_run(graph, inputs), expected_conv(graph, inputs, c))) << mode;
  }
}

TEST(OpenBlasConvTest, AutoPadValidMeansNoPadding) {
  ConvCase c{{1, 2, 8, 8}, {3, 2, 3, 3}, {}};
  Graph graph = conv_graph(c);
  Node& node = graph.node(0);
  node.attributes.erase("pads");
  node.attributes.set("auto_pad", std::string("VALID"));
  std::vector<Tensor> inputs = inputs_for(graph);
  EXPECT_TRUE(all_close(compile_and_run(graph, inputs), expected_conv(graph, inputs, c)));
}

TEST(OpenBlasConvTest, OneDimensionalConvolutionMatchesTheTwoDimensionalOneOfHeightOne) {
  Graph graph;
  ValueId x = graph.add_input("x", f32({2, 3, 11}));
  Tensor w = random_constant(f32({4, 3, 3}), "w");
  ValueId wv = graph.add_constant("w", w);
  ValueId y = graph.add_value("y", f32({2, 4, 6}));
  Attributes attrs;
  attrs.set("strides", std::vector<std::int64_t>{2});
  attrs.set("pads", std::vector<std::int64_t>{1, 1});
  graph.add_node("Conv", {x, wv}, {y}, attrs);
  graph.add_output(y);
  std::vector<Tensor> inputs = inputs_for(graph);
  NaiveConv p;
  p.stride_w = 2;
  p.pad_left = p.pad_right = 1;
  Tensor expected =
      naive_conv2d(inputs[0].reshaped({2, 3, 1, 11}), w.reshaped({4, 3, 1, 3}), Tensor{}, p);
  EXPECT_TRUE(all_close(compile_and_run(graph, inputs), expected.reshaped({2, 4, 6})));
}

TEST(OpenBlasConvTest, RuntimeWeightsAndBiasAreReadFromTheInputs) {
  Graph graph;
  ValueId x = graph.add_input("x", f32({1, 4, 6, 6}));
  ValueId w = graph.add_input("w", f32({5, 4, 3, 3}));
  ValueId b = graph.add_input("b", f32({5}));
  ValueId y = graph.add_value("y", f32({1, 5, 4, 4}));
  graph.add_node("Conv", {x, w, b}, {y});
  graph.add_output(y);
  std::vector<Tensor> inputs = inputs_for(graph);
  EXPECT_TRUE(all_close(compile_and_run(graph, inputs),
                        naive_conv2d(inputs[0], inputs[1], inputs[2], NaiveConv{})));
}

TEST(OpenBlasConvTest, Im2colZeroFillsThePaddedBorder) {
  openblas::ConvGeometry g;
  g.batch = 1;
  g.channels = 1;
  g.height = 2;
  g.width = 2;
  g.out_channels = 1;
  g.kernel_h = g.kernel_w = 2;
  g.pad_top = g.pad_left = 1;
  g.out_h = g.out_w = 2;  // pads 1,1,0,0
  const float x[] = {1, 2, 3, 4};
  std::vector<float> patches(4 * 4, -1.0f);
  openblas::im2col(g, x, patches.data(), 1);
  // Rows: kernel taps (0,0) (0,1) (1,0) (1,1); columns: output pixels.
  const std::vector<float> expected = {0, 0, 0, 1,  //
                                       0, 0, 1, 2,  //
                                       0, 1, 0, 3,  //
                                       1, 2, 3, 4};
  EXPECT_EQ(patches, expected);
}

TEST(OpenBlasConvTest, GroupsThatDoNotDivideTheChannelsAreRejected) {
  ConvCase c{{1, 6, 5, 5}, {4, 2, 3, 3}, {}};
  c.p.groups = 4;
  Graph graph = conv_graph(c);
  EXPECT_FALSE(backend().supports(graph, graph.node(0)));
  EXPECT_FALSE(backend().compile(graph, CompileOptions{1}).ok());
}

TEST(OpenBlasConvTest, ThreeDimensionalConvolutionsAreRejected) {
  Graph graph;
  ValueId x = graph.add_input("x", f32({1, 2, 4, 4, 4}));
  ValueId w = graph.add_input("w", f32({3, 2, 3, 3, 3}));
  ValueId y = graph.add_value("y", f32({1, 3, 2, 2, 2}));
  graph.add_node("Conv", {x, w}, {y});
  graph.add_output(y);
  EXPECT_FALSE(backend().supports(graph, graph.node(0)));
  Result<std::unique_ptr<Kernel>> kernel = backend().compile(graph, CompileOptions{1});
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().find("2-D"), std::string::npos) << kernel.error();
}

}  // namespace
}  // namespace collage::openblas_test
