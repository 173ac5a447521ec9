// Edge layouts: a oneDNN partition whose inputs and outputs the caller stores
// channels-last or in oneDNN's blocked layout computes what the plain
// partition computes, whatever layout each primitive inside chooses.
#include <gtest/gtest.h>

#include "backends/onednn/onednn_test_util.h"
#include "collage/runtime/trace.h"

namespace collage::onednn_test {
namespace {

using testing::expect_edge_layouts_match_reference;

std::vector<EdgeLayout> every_layout() {
  return {EdgeLayout::kPlain, EdgeLayout::kChannelsLast, EdgeLayout::kBlocked8,
          EdgeLayout::kBlocked16};
}

// x[1,32,9,7] -> Conv 3x3 (32 -> 16) -> Relu
Graph conv_relu() {
  GraphBuilder g;
  ValueId x = g.input({1, 32, 9, 7});
  ValueId conv = g.node("Conv", {x, g.weights({16, 32, 3, 3}), g.weights({16})}, {1, 16, 9, 7},
                        attrs({{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}}));
  return g.finish(g.node("Relu", {conv}, {1, 16, 9, 7}));
}

TEST(OnednnEdgeLayoutTest, TheBackendTakesEveryLayout) {
  for (EdgeLayout layout : every_layout()) {
    EXPECT_TRUE(onednn_backend().accepts_edge_layout(layout)) << edge_layout_name(layout);
  }
  EXPECT_EQ(onednn_backend().edge_layouts().size(), every_layout().size());
}

TEST(OnednnEdgeLayoutTest, ItsLayoutConversionStoresTensorsAsTheEdgeLayoutSays) {
  // 32 channels (both blocks divide them), an odd plane.
  const TensorType type{DType::kFloat32, {2, 32, 5, 7}};
  const Tensor plain = testing::random_tensor(type.shape, 7);
  for (EdgeLayout layout : every_layout()) {
    if (layout == EdgeLayout::kPlain) {
      EXPECT_FALSE(onednn_backend().layout_conversion(type, layout, false, 2));
      continue;
    }
    const Tensor expected = testing::convert_edge_layout(plain, layout, false);
    Tensor stored = Tensor::allocate(type);
    Tensor back = Tensor::allocate(type);
    auto into = onednn_backend().layout_conversion(type, layout, false, 2);
    auto out_of = onednn_backend().layout_conversion(type, layout, true, 2);
    ASSERT_TRUE(into) << edge_layout_name(layout);
    ASSERT_TRUE(out_of) << edge_layout_name(layout);
    into->run(plain.data<float>(), stored.data<float>());
    out_of->run(stored.data<float>(), back.data<float>());
    for (std::int64_t i = 0; i < type.numel(); ++i) {
      ASSERT_EQ(stored.data<float>()[i], expected.data<float>()[i])
          << edge_layout_name(layout) << " element " << i;
      ASSERT_EQ(back.data<float>()[i], plain.data<float>()[i])
          << edge_layout_name(layout) << " element " << i;
    }
  }
  // A block that does not divide the channels: no conversion.
  const TensorType odd{DType::kFloat32, {1, 12, 4, 4}};
  EXPECT_FALSE(onednn_backend().layout_conversion(odd, EdgeLayout::kBlocked16, false, 1));
}

TEST(OnednnEdgeLayoutTest, ConvolutionMatchesInEveryPairOfEdgeLayouts) {
  for (EdgeLayout in : every_layout()) {
    for (EdgeLayout out : every_layout()) {
      expect_edge_layouts_match_reference(onednn_backend(), conv_relu(), in, out, 2);
    }
  }
}

TEST(OnednnEdgeLayoutTest, ResidualAddAndPoolMatchInEveryEdgeLayout) {
  // Two inputs meet in an Add (a binary primitive keeps its first input's
  // layout), then a max pool and a global average pool.
  GraphBuilder g;
  ValueId a = g.input({2, 16, 8, 8});
  ValueId b = g.input({2, 16, 8, 8});
  ValueId sum = g.node("Add", {a, b}, {2, 16, 8, 8});
  ValueId pool = g.node("MaxPool", {sum}, {2, 16, 4, 4},
                        attrs({{"kernel_shape", std::vector<std::int64_t>{2, 2}},
                               {"strides", std::vector<std::int64_t>{2, 2}}}));
  g.output(pool);
  g.output(g.node("GlobalAveragePool", {pool}, {2, 16, 1, 1}));
  Graph graph = g.finish(pool);
  for (EdgeLayout layout : every_layout()) {
    expect_edge_layouts_match_reference(onednn_backend(), graph, layout, layout, 1);
  }
}

TEST(OnednnEdgeLayoutTest, AMatMulReadsABlockedOrChannelsLastInputInPlainOrder) {
  // MatMul multiplies the innermost dims of the plain order, so a 4-D input
  // in another layout is reordered first.
  GraphBuilder g;
  ValueId x = g.input({1, 16, 2, 3});
  Graph graph = g.finish(g.node("MatMul", {x, g.weights({3, 5})}, {1, 16, 2, 5}));
  for (EdgeLayout layout : every_layout()) {
    expect_edge_layouts_match_reference(onednn_backend(), graph, layout, EdgeLayout::kPlain, 1);
    expect_edge_layouts_match_reference(onednn_backend(), graph, layout, layout, 1);
  }
}

// The reorders one run of `graph` makes, compiled with its one input and
// output edge in `layout`.
int reorders_in_a_run(const Graph& graph, EdgeLayout layout) {
  CompileOptions options{1};
  options.input_layouts = {layout};
  options.output_layouts = {layout};
  auto kernel = onednn_backend().compile(graph, options);
  EXPECT_TRUE(kernel.ok()) << kernel.error();
  if (!kernel.ok()) return -1;
  std::vector<Tensor> inputs = random_inputs(graph, 1);
  std::vector<Tensor> outputs = testing::allocate_outputs(graph);
  TraceRecorder recorder;
  {
    TraceRecorder::Install install(&recorder);
    (*kernel)->run(inputs, outputs);
  }
  int count = 0;
  for (const TraceSpan& span : recorder.spans()) count += span.kind == SpanKind::kLayout;
  return count;
}

TEST(OnednnEdgeLayoutTest, EdgesInTheLayoutOfItsConvolutionsNeedNoReorder) {
  const EdgeLayout preferred = onednn_backend().edge_layouts().front();
  if (preferred == EdgeLayout::kPlain) GTEST_SKIP() << "oneDNN convolves plain tensors here";
  GraphBuilder g;
  ValueId x = g.input({1, 32, 14, 14});
  // Stride 2: a 3x3 convolution of stride 1 may run oneDNN's Winograd
  // kernel, which computes in a blocked layout of its own.
  Graph graph = g.finish(g.node("Conv", {x, g.weights({32, 32, 3, 3})}, {1, 32, 7, 7},
                                attrs({{"pads", std::vector<std::int64_t>{1, 1, 1, 1}},
                                       {"strides", std::vector<std::int64_t>{2, 2}}})));
  EXPECT_EQ(reorders_in_a_run(graph, preferred), 0) << edge_layout_name(preferred);
  // Plain edges: into the convolution's layout and back out.
  EXPECT_EQ(reorders_in_a_run(graph, EdgeLayout::kPlain), 2);
}

// RegNet's grouped convolutions: 8 channels per group, stride 2. oneDNN's
// own choice on AVX-512 is a layout blocked by 8, which cost a reorder in
// and out between channels-last partitions.
Graph grouped_convolution() {
  GraphBuilder g;
  ValueId x = g.input({1, 48, 16, 16});
  return g.finish(g.node("Conv", {x, g.weights({48, 8, 3, 3})}, {1, 48, 8, 8},
                         attrs({{"pads", std::vector<std::int64_t>{1, 1, 1, 1}},
                                {"strides", std::vector<std::int64_t>{2, 2}},
                                {"group", std::int64_t{6}}})));
}

TEST(OnednnEdgeLayoutTest, AGroupedConvolutionMatchesInEveryPairOfEdgeLayouts) {
  const Graph graph = grouped_convolution();
  for (EdgeLayout in : every_layout()) {
    for (EdgeLayout out : every_layout()) {
      expect_edge_layouts_match_reference(onednn_backend(), graph, in, out, 1);
    }
  }
}

TEST(OnednnEdgeLayoutTest, AGroupedConvolutionReadsAndWritesTheLayoutItsInputArrivesIn) {
  const EdgeLayout preferred = onednn_backend().edge_layouts().front();
  if (preferred == EdgeLayout::kPlain) GTEST_SKIP() << "oneDNN convolves plain tensors here";
  EXPECT_EQ(reorders_in_a_run(grouped_convolution(), preferred), 0) << edge_layout_name(preferred);
}

// DCGAN's third transposed convolution, at half the channels.
Graph transposed_convolution() {
  GraphBuilder g;
  ValueId x = g.input({1, 64, 16, 16});
  return g.finish(g.node("ConvTranspose", {x, g.weights({64, 32, 4, 4})}, {1, 32, 32, 32},
                         attrs({{"pads", std::vector<std::int64_t>{1, 1, 1, 1}},
                                {"strides", std::vector<std::int64_t>{2, 2}}})));
}

TEST(OnednnEdgeLayoutTest, ATransposedConvolutionMatchesInEveryPairOfEdgeLayouts) {
  const Graph graph = transposed_convolution();
  for (EdgeLayout in : every_layout()) {
    for (EdgeLayout out : every_layout()) {
      expect_edge_layouts_match_reference(onednn_backend(), graph, in, out, 1);
    }
  }
}

TEST(OnednnEdgeLayoutTest, PerChannelAndScalarOperandsOfALaidOutInputMatch) {
  // A squeeze-excitation scale, a per-channel shift and a scalar factor:
  // the broadcast operands are plain constants beside an input in each
  // layout (oneDNN gets them in the input's layout family where it would
  // otherwise run its reference kernel).
  GraphBuilder g;
  ValueId x = g.input({1, 16, 5, 7});
  ValueId scaled = g.node("Mul", {x, g.weights({1, 16, 1, 1})}, {1, 16, 5, 7});
  ValueId shifted = g.node("Sub", {scaled, g.weights({1, 16, 1, 1})}, {1, 16, 5, 7});
  Graph graph = g.finish(g.node("Mul", {shifted, g.weights({1, 1, 1, 1})}, {1, 16, 5, 7}));
  for (EdgeLayout layout : every_layout()) {
    expect_edge_layouts_match_reference(onednn_backend(), graph, layout, layout, 2);
    expect_edge_layouts_match_reference(onednn_backend(), graph, layout, EdgeLayout::kPlain, 1);
  }
}

TEST(OnednnEdgeLayoutTest, ABlockThatDoesNotDivideTheChannelsIsAFailure) {
  GraphBuilder g;
  ValueId x = g.input({1, 12, 4, 4});
  Graph graph = g.finish(g.node("Relu", {x}, {1, 12, 4, 4}));
  CompileOptions options{1};
  options.input_layouts = {EdgeLayout::kBlocked8};
  auto kernel = onednn_backend().compile(graph, options);
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().find("divides"), std::string::npos) << kernel.error();
}

}  // namespace
}  // namespace collage::onednn_test
