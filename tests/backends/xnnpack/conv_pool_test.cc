// Convolution, transposed convolution and pooling on XNNPACK against the
// native reference, over grids of shapes and window attributes.
#include <gtest/gtest.h>

#include "backends/xnnpack/reference_check.h"

namespace collage::testing {
namespace {

std::int64_t window_output(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                           std::int64_t pad_begin, std::int64_t pad_end, std::int64_t dilation,
                           bool ceil_mode = false) {
  const std::int64_t span = in + pad_begin + pad_end - ((kernel - 1) * dilation + 1);
  if (span < 0) return 0;
  std::int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // A last window starting in the end padding is dropped (ONNX, PyTorch).
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

Graph conv_graph(const Shape& x, std::int64_t out_channels, std::int64_t group, Ints kernel,
                 Ints strides, Ints pads, Ints dilations, bool bias = true) {
  GraphMaker g;
  ValueId in = g.input(x);
  ValueId w = g.weights({out_channels, x[1] / group, kernel[0], kernel[1]});
  std::vector<ValueId> inputs = {in, w};
  if (bias) inputs.push_back(g.weights({out_channels}));
  const Shape y = {x[0], out_channels,
                   window_output(x[2], kernel[0], strides[0], pads[0], pads[2], dilations[0]),
                   window_output(x[3], kernel[1], strides[1], pads[1], pads[3], dilations[1])};
  return g.finish(g.node(
      "Conv", inputs, y,
      attrs({{"strides", strides}, {"pads", pads}, {"dilations", dilations}, {"group", group}})));
}

TEST(XnnpackConvTest, MatchesReferenceAcrossKernelsStridesPadsAndDilations) {
  for (std::int64_t k : {1, 3, 5}) {
    for (std::int64_t s : {1, 2}) {
      for (std::int64_t p : {0, 1, 2}) {
        for (std::int64_t d : {1, 2}) {
          if (window_output(9, k, s, p, p, d) <= 0) continue;
          SCOPED_TRACE(::testing::Message() << "k=" << k << " s=" << s << " p=" << p << " d=" << d);
          expect_matches_reference(
              conv_graph({1, 3, 9, 11}, 4, 1, {k, k}, {s, s}, {p, p, p, p}, {d, d}));
        }
      }
    }
  }
}

TEST(XnnpackConvTest, MatchesReferenceWithRectangularKernelsAndAsymmetricPads) {
  expect_matches_reference(conv_graph({2, 5, 10, 7}, 6, 1, {2, 3}, {2, 1}, {0, 1, 2, 1}, {1, 1}));
  expect_matches_reference(conv_graph({1, 3, 8, 13}, 7, 1, {3, 1}, {1, 3}, {1, 0, 0, 2}, {2, 1}));
}

TEST(XnnpackConvTest, MatchesReferenceWithoutBias) {
  expect_matches_reference(
      conv_graph({2, 4, 6, 6}, 8, 1, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, false));
}

TEST(XnnpackConvTest, GroupedConvolutionMatchesReference) {
  for (std::int64_t group : {2, 4}) {
    SCOPED_TRACE(group);
    expect_matches_reference(
        conv_graph({1, 8, 9, 9}, 8, group, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}));
    expect_matches_reference(
        conv_graph({2, 8, 7, 10}, 16, group, {1, 3}, {2, 2}, {0, 1, 0, 1}, {1, 1}));
  }
}

TEST(XnnpackConvTest, DepthwiseConvolutionMatchesReferenceForAnyKernelAndMultiplier) {
  for (std::int64_t multiplier : {1, 2}) {
    for (std::int64_t k : {2, 3, 5, 7}) {
      for (std::int64_t s : {1, 2}) {
        SCOPED_TRACE(::testing::Message()
                     << "multiplier=" << multiplier << " k=" << k << " s=" << s);
        const std::int64_t p = k / 2;
        expect_matches_reference(
            conv_graph({1, 6, 11, 9}, 6 * multiplier, 6, {k, k}, {s, s}, {p, p, p, p}, {1, 1}));
      }
    }
  }
  expect_matches_reference(conv_graph({2, 5, 9, 9}, 5, 5, {3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}));
}

TEST(XnnpackConvTest, AutoPadSameAndValidMatchReference) {
  for (const char* auto_pad : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    for (std::int64_t s : {1, 2}) {
      SCOPED_TRACE(::testing::Message() << auto_pad << " s=" << s);
      GraphMaker g;
      const Shape x = {1, 3, 10, 7};
      ValueId in = g.input(x);
      ValueId w = g.weights({4, 3, 4, 3});
      const bool valid = std::string(auto_pad) == "VALID";
      const Shape y = {1, 4, valid ? (10 - 4) / s + 1 : (10 + s - 1) / s,
                       valid ? (7 - 3) / s + 1 : (7 + s - 1) / s};
      Graph graph =
          g.finish(g.node("Conv", {in, w}, y,
                          attrs({{"auto_pad", std::string(auto_pad)}, {"strides", Ints{s, s}}})));
      expect_matches_reference(graph);
    }
  }
}

TEST(XnnpackConvTest, RunsOnTwoThreads) {
  expect_matches_reference(conv_graph({2, 16, 20, 20}, 32, 1, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}),
                           2);
}

Graph conv_transpose_graph(const Shape& x, std::int64_t out_channels, std::int64_t group,
                           Ints kernel, Ints strides, Ints pads, Ints dilations,
                           Ints output_padding) {
  GraphMaker g;
  ValueId in = g.input(x);
  ValueId w = g.weights({x[1], out_channels / group, kernel[0], kernel[1]});
  ValueId b = g.weights({out_channels});
  Shape y = {x[0], out_channels, 0, 0};
  for (int i = 0; i < 2; ++i) {
    y[2 + i] = strides[i] * (x[2 + i] - 1) + output_padding[i] + (kernel[i] - 1) * dilations[i] +
               1 - pads[i] - pads[2 + i];
  }
  return g.finish(g.node("ConvTranspose", {in, w, b}, y,
                         attrs({{"strides", strides},
                                {"pads", pads},
                                {"dilations", dilations},
                                {"group", group},
                                {"output_padding", output_padding}})));
}

TEST(XnnpackConvTransposeTest, MatchesReferenceAcrossStridesPadsAndOutputPadding) {
  for (std::int64_t s : {1, 2, 3}) {
    for (std::int64_t p : {0, 1}) {
      for (std::int64_t adjustment = 0; adjustment < s && adjustment < 2; ++adjustment) {
        SCOPED_TRACE(::testing::Message() << "s=" << s << " p=" << p << " adj=" << adjustment);
        expect_matches_reference(conv_transpose_graph(
            {1, 4, 5, 6}, 3, 1, {3, 3}, {s, s}, {p, p, p, p}, {1, 1}, {adjustment, adjustment}));
      }
    }
  }
}

TEST(XnnpackConvTransposeTest, GroupedAndDilatedMatchReference) {
  expect_matches_reference(
      conv_transpose_graph({2, 6, 4, 5}, 4, 2, {2, 3}, {2, 1}, {0, 1, 1, 0}, {1, 1}, {1, 0}));
  expect_matches_reference(
      conv_transpose_graph({1, 3, 5, 5}, 2, 1, {3, 3}, {1, 1}, {1, 1, 1, 1}, {2, 2}, {0, 0}));
}

Graph pool_graph(const char* op, const Shape& x, Ints kernel, Ints strides, Ints pads,
                 Attributes extra = {}) {
  GraphMaker g;
  ValueId in = g.input(x);
  const bool ceil_mode = extra.get_int("ceil_mode", 0) != 0;
  const Ints dilations = extra.get_ints("dilations", {1, 1});
  const Shape y = {
      x[0], x[1],
      window_output(x[2], kernel[0], strides[0], pads[0], pads[2], dilations[0], ceil_mode),
      window_output(x[3], kernel[1], strides[1], pads[1], pads[3], dilations[1], ceil_mode)};
  extra.set("kernel_shape", kernel);
  extra.set("strides", strides);
  extra.set("pads", pads);
  return g.finish(g.node(op, {in}, y, std::move(extra)));
}

TEST(XnnpackPoolTest, MaxPoolMatchesReferenceAcrossWindows) {
  for (std::int64_t k : {2, 3}) {
    for (std::int64_t s : {1, 2, 3}) {
      for (std::int64_t p = 0; p < k; ++p) {
        SCOPED_TRACE(::testing::Message() << "k=" << k << " s=" << s << " p=" << p);
        expect_matches_reference(
            pool_graph("MaxPool", {2, 3, 9, 10}, {k, k}, {s, s}, {p, p, p, p}));
      }
    }
  }
}

TEST(XnnpackPoolTest, MaxPoolWithDilationAndCeilModeMatchesReference) {
  expect_matches_reference(pool_graph("MaxPool", {1, 4, 11, 9}, {3, 2}, {2, 2}, {1, 0, 1, 1},
                                      attrs({{"dilations", Ints{2, 1}}})));
  for (std::int64_t s : {2, 3}) {
    SCOPED_TRACE(s);
    expect_matches_reference(pool_graph("MaxPool", {1, 3, 10, 8}, {3, 3}, {s, s}, {0, 1, 0, 1},
                                        attrs({{"ceil_mode", std::int64_t{1}}})));
  }
}

// This XNNPACK picks wrong elements when a dilated window overlaps padding;
// the backend pads with -inf itself.
TEST(XnnpackPoolTest, DilatedMaxPoolOverPaddingMatchesReference) {
  expect_matches_reference(pool_graph("MaxPool", {1, 2, 5, 5}, {2, 2}, {2, 2}, {2, 2, 2, 2},
                                      attrs({{"dilations", Ints{2, 2}}})));
  expect_matches_reference(pool_graph("MaxPool", {2, 3, 6, 6}, {2, 2}, {3, 2}, {1, 1, 2, 1},
                                      attrs({{"dilations", Ints{2, 1}}})));
}

TEST(XnnpackPoolTest, AveragePoolMatchesReferenceWithAndWithoutCountingPads) {
  for (std::int64_t include : {0, 1}) {
    for (std::int64_t p : {0, 1}) {
      for (std::int64_t s : {1, 2}) {
        SCOPED_TRACE(::testing::Message()
                     << "count_include_pad=" << include << " p=" << p << " s=" << s);
        expect_matches_reference(pool_graph("AveragePool", {2, 3, 9, 8}, {3, 3}, {s, s},
                                            {p, p, p, p}, attrs({{"count_include_pad", include}})));
      }
    }
  }
}

TEST(XnnpackPoolTest, AveragePoolCeilModeMatchesReference) {
  for (std::int64_t include : {0, 1}) {
    SCOPED_TRACE(include);
    expect_matches_reference(
        pool_graph("AveragePool", {1, 2, 10, 9}, {3, 2}, {2, 2}, {1, 0, 1, 0},
                   attrs({{"ceil_mode", std::int64_t{1}}, {"count_include_pad", include}})));
  }
}

TEST(XnnpackPoolTest, GlobalPoolsMatchReference) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    for (const Shape& x : {Shape{2, 5, 7, 9}, Shape{1, 3, 1, 1}, Shape{1, 4, 1, 6}}) {
      SCOPED_TRACE(::testing::Message() << op << " " << shape_to_string(x));
      GraphMaker g;
      ValueId in = g.input(x);
      expect_matches_reference(g.finish(g.node(op, {in}, {x[0], x[1], 1, 1})));
    }
  }
}

TEST(XnnpackPoolTest, OneByOnePoolingIsNotSupported) {
  Graph graph = pool_graph("MaxPool", {1, 2, 4, 4}, {1, 1}, {2, 2}, {0, 0, 0, 0});
  EXPECT_FALSE(xnnpack_backend().supports(graph, graph.node(0)));
}

}  // namespace
}  // namespace collage::testing
