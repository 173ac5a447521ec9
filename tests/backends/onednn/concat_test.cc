// Concat on oneDNN against the reference: along channels after
// convolutions (sources in the convolutions' layout), beside a plain graph
// input, with a constant, along the last axis, and with every edge layout;
// a channel Concat that a BatchNormalization (and its Relu) reads, each
// source normalized into its part of the output.
#include <gtest/gtest.h>

#include <utility>

#include "backends/onednn/onednn_test_util.h"

namespace collage::onednn_test {
namespace {

using Ints = std::vector<std::int64_t>;
using testing::expect_backend_matches_reference;
using testing::expect_edge_layouts_match_reference;

Attributes axis(std::int64_t value) { return attrs({{"axis", value}}); }

// Two 1x1 and 3x3 convolutions of one input, concatenated along channels
// (SqueezeNet's expand layer), then a Relu.
Graph fire_module(std::int64_t channels) {
  GraphBuilder g;
  ValueId x = g.input({1, 16, 6, 6});
  ValueId one = g.node("Conv", {x, g.weights({channels, 16, 1, 1})}, {1, channels, 6, 6});
  ValueId three = g.node("Conv", {x, g.weights({channels, 16, 3, 3})}, {1, channels, 6, 6},
                         attrs({{"pads", Ints{1, 1, 1, 1}}}));
  ValueId cat = g.node("Concat", {one, three}, {1, 2 * channels, 6, 6}, axis(1));
  return g.finish(g.node("Relu", {cat}, {1, 2 * channels, 6, 6}));
}

TEST(OnednnConcatTest, ChannelsOfTwoConvolutionsMatchTheReference) {
  for (std::int64_t channels : {16, 5}) {
    expect_backend_matches_reference(onednn_backend(), fire_module(channels), 2, 1e-4, -1, 1);
  }
}

TEST(OnednnConcatTest, AConvolutionOutputBesideAGraphInputAndAConstant) {
  GraphBuilder g;
  ValueId x = g.input({1, 4, 5, 5});
  ValueId conv = g.node("Conv", {x, g.weights({16, 4, 1, 1})}, {1, 16, 5, 5});
  ValueId cat = g.node("Concat", {conv, x, g.weights({1, 3, 5, 5})}, {1, 23, 5, 5}, axis(-3));
  expect_backend_matches_reference(onednn_backend(), g.finish(cat), 1, 1e-4, -1, 1);
}

TEST(OnednnConcatTest, AlongTheLastAxisOfMatrices) {
  GraphBuilder g;
  ValueId a = g.input({3, 4});
  ValueId b = g.input({3, 7});
  expect_backend_matches_reference(
      onednn_backend(), g.finish(g.node("Concat", {a, b, a}, {3, 15}, axis(-1))), 1, 0, -1, 1);
}

// Along an outer axis each source is copied into its part of the output
// (a reorder per source): rows of matrices, and channels of plain, blocked
// and channels-last images (there, along the innermost axis, oneDNN's
// concat).
TEST(OnednnConcatTest, AlongAnOuterAxisEachSourceFillsItsPart) {
  GraphBuilder g;
  ValueId a = g.input({3, 4});
  ValueId b = g.input({2, 4});
  expect_backend_matches_reference(
      onednn_backend(), g.finish(g.node("Concat", {a, b, a}, {8, 4}, axis(0))), 1, 0, -1, 1);
  for (std::int64_t channels : {8, 3}) {
    GraphBuilder images;
    ValueId x = images.input({2, channels, 5, 5});
    ValueId y = images.input({2, 8, 5, 5});
    ValueId cat = images.node("Concat", {x, y, x}, {2, 2 * channels + 8, 5, 5}, axis(1));
    for (EdgeLayout layout :
         {EdgeLayout::kPlain, EdgeLayout::kChannelsLast, EdgeLayout::kBlocked8}) {
      if (layout == EdgeLayout::kBlocked8 && channels % 8 != 0) continue;
      expect_edge_layouts_match_reference(onednn_backend(), images.finish(cat), layout, layout, 1);
    }
  }
}

TEST(OnednnConcatTest, EveryEdgeLayoutMatches) {
  for (EdgeLayout layout : {EdgeLayout::kPlain, EdgeLayout::kChannelsLast, EdgeLayout::kBlocked8,
                            EdgeLayout::kBlocked16}) {
    expect_edge_layouts_match_reference(onednn_backend(), fire_module(16), layout, layout, 2);
  }
}

// A DenseNet layer: the block's features so far (two convolutions' outputs
// of `channels` each), concatenated, normalized and rectified, read by a
// 1x1 convolution.
Graph dense_layer(std::int64_t batch, std::int64_t channels, bool relu) {
  GraphBuilder g;
  ValueId x = g.input({batch, 16, 6, 6});
  ValueId one = g.node("Conv", {x, g.weights({channels, 16, 1, 1})}, {batch, channels, 6, 6});
  ValueId three = g.node("Conv", {x, g.weights({channels, 16, 3, 3})}, {batch, channels, 6, 6},
                         attrs({{"pads", Ints{1, 1, 1, 1}}}));
  const Shape features = {batch, 2 * channels, 6, 6};
  ValueId cat = g.node("Concat", {one, three}, features, axis(1));
  const Shape c = {2 * channels};
  ValueId normalized =
      g.node("BatchNormalization",
             {cat, g.weights(c), g.weights(c), g.weights(c), g.weights(c, 0.5f, 1.5f)}, features);
  if (relu) normalized = g.node("Relu", {normalized}, features);
  return g.finish(
      g.node("Conv", {normalized, g.weights({16, 2 * channels, 1, 1})}, {batch, 16, 6, 6}));
}

// How many batch norms `graph` lowers to, its convolutions computing in
// `layout`.
int batch_norm_steps(const Graph& graph, EdgeLayout layout = EdgeLayout::kBlocked16) {
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  CompileOptions options;
  options.compute_layout = layout;
  Result<onednn::Program> program = onednn::lower_partition(graph, engine, stream, options);
  EXPECT_TRUE(program.ok()) << (program.ok() ? "" : program.error());
  if (!program.ok()) return 0;
  int count = 0;
  for (const onednn::Step& step : program.value().steps) {
    count += step.primitive.get_kind() == dnnl::primitive::kind::batch_normalization ? 1 : 0;
  }
  return count;
}

TEST(OnednnConcatTest, ABatchNormOfAConcatNormalizesEachSourceIntoItsPart) {
  for (bool relu : {true, false}) {
    const Graph graph = dense_layer(1, 16, relu);
    EXPECT_EQ(batch_norm_steps(graph), 2) << "relu " << relu;
    // In channels-last a source's channels are not one run: the
    // concatenation is made first.
    EXPECT_EQ(batch_norm_steps(graph, EdgeLayout::kChannelsLast), 1) << "relu " << relu;
    expect_backend_matches_reference(onednn_backend(), graph, 2, 1e-4, -1, 1);
    for (EdgeLayout layout : {EdgeLayout::kPlain, EdgeLayout::kChannelsLast, EdgeLayout::kBlocked8,
                              EdgeLayout::kBlocked16}) {
      expect_edge_layouts_match_reference(onednn_backend(), graph, layout, layout, 2);
    }
  }
}

// A batch of two (a source's channels are not one run) and sources that
// split a channel block are concatenated first and normalized after.
TEST(OnednnConcatTest, ABatchNormOfAConcatItCannotSplitRunsAfterIt) {
  for (auto [batch, channels] : {std::pair<std::int64_t, std::int64_t>{2, 16}, {1, 5}}) {
    const Graph graph = dense_layer(batch, channels, true);
    if (batch == 2) {
      EXPECT_EQ(batch_norm_steps(graph), 1);
    }
    expect_backend_matches_reference(onednn_backend(), graph, 2, 1e-4, -1, 1);
    expect_edge_layouts_match_reference(onednn_backend(), graph, EdgeLayout::kBlocked16,
                                        EdgeLayout::kBlocked16, 2);
  }
}

// Two plain graph inputs, concatenated, normalized and rectified; when
// the concatenation is a partition output too it is kept, and the batch
// norm reads it.
TEST(OnednnConcatTest, ABatchNormOfAConcatOfGraphInputs) {
  for (bool keep : {false, true}) {
    GraphBuilder g;
    ValueId a = g.input({1, 16, 4, 4});
    ValueId b = g.input({1, 8, 4, 4});
    ValueId cat = g.node("Concat", {a, b, a}, {1, 40, 4, 4}, axis(1));
    const Shape c = {40};
    ValueId normalized = g.node(
        "BatchNormalization",
        {cat, g.weights(c), g.weights(c), g.weights(c), g.weights(c, 0.5f, 1.5f)}, {1, 40, 4, 4});
    if (keep) g.output(cat);
    const Graph graph = g.finish(g.node("Relu", {normalized}, {1, 40, 4, 4}));
    EXPECT_EQ(batch_norm_steps(graph), keep ? 1 : 3);
    expect_backend_matches_reference(onednn_backend(), graph, 1, 1e-4, -1, 1);
  }
}

TEST(OnednnConcatTest, InputsThatDisagreeOffTheAxisAreRefused) {
  GraphBuilder g;
  ValueId a = g.input({2, 4});
  ValueId b = g.input({3, 4});
  Graph graph = g.finish(g.node("Concat", {a, b}, {5, 4}, axis(1)));
  EXPECT_FALSE(onednn_backend().supports(graph, graph.node(0)));
}

}  // namespace
}  // namespace collage::onednn_test
