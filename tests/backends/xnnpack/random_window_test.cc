// Random sweeps over the attributes of windowed ops: every configuration the
// XNNPACK backend claims to support must compile and match the reference.
// The sweeps also count the claimed cases, so a predicate that quietly stops
// claiming anything fails too.
#include <gtest/gtest.h>

#include <random>

#include "backends/xnnpack/reference_check.h"

namespace collage::testing {
namespace {

struct Sampler {
  std::mt19937 engine{2024};
  std::int64_t pick(std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(engine);
  }
};

// ONNX's (and PyTorch's) output size of a window; 0 when no window fits.
std::int64_t window_output(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                           std::int64_t pad_begin, std::int64_t pad_end, std::int64_t dilation,
                           bool ceil_mode) {
  const std::int64_t span = in + pad_begin + pad_end - ((kernel - 1) * dilation + 1);
  if (span < 0) return 0;
  std::int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

struct Window {
  Ints kernel, strides, pads, dilations;
  Shape output_hw;
};

// A random window over an input of `h` x `w`; nullopt when it has no output.
std::optional<Window> random_window(Sampler& s, std::int64_t h, std::int64_t w, bool dilate,
                                    bool ceil_mode) {
  Window window;
  window.kernel = {s.pick(1, 4), s.pick(1, 4)};
  window.strides = {s.pick(1, 3), s.pick(1, 3)};
  window.dilations = {dilate ? s.pick(1, 2) : 1, dilate ? s.pick(1, 2) : 1};
  // Pads up to the effective kernel minus one, the most ONNX allows pools.
  for (int i = 0; i < 4; ++i) {
    const std::int64_t effective = (window.kernel[i % 2] - 1) * window.dilations[i % 2] + 1;
    window.pads.push_back(s.pick(0, std::min<std::int64_t>(2, effective - 1)));
  }
  for (int i = 0; i < 2; ++i) {
    std::int64_t out =
        window_output(i == 0 ? h : w, window.kernel[i], window.strides[i], window.pads[i],
                      window.pads[2 + i], window.dilations[i], ceil_mode);
    if (out <= 0) return std::nullopt;
    window.output_hw.push_back(out);
  }
  return window;
}

TEST(XnnpackRandomWindowTest, EveryClaimedConvolutionMatchesReference) {
  Sampler s;
  int claimed = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const std::int64_t group =
        std::vector<std::int64_t>{1, 2, 3}[static_cast<std::size_t>(s.pick(0, 2))];
    const bool depthwise = s.pick(0, 3) == 0;
    const std::int64_t channels = depthwise ? s.pick(1, 6) : group * s.pick(1, 3);
    const std::int64_t groups = depthwise ? channels : group;
    const std::int64_t out_channels = groups * s.pick(1, 3);
    const Shape x = {s.pick(1, 2), channels, s.pick(1, 9), s.pick(1, 9)};
    auto window = random_window(s, x[2], x[3], true, false);
    if (!window) continue;
    GraphMaker g;
    ValueId in = g.input(x);
    ValueId weights =
        g.weights({out_channels, channels / groups, window->kernel[0], window->kernel[1]});
    Graph graph = g.finish(g.node("Conv", {in, weights, g.weights({out_channels})},
                                  {x[0], out_channels, window->output_hw[0], window->output_hw[1]},
                                  attrs({{"kernel_shape", window->kernel},
                                         {"strides", window->strides},
                                         {"pads", window->pads},
                                         {"dilations", window->dilations},
                                         {"group", groups}})));
    if (!xnnpack_backend().supports(graph, graph.node(0))) continue;
    ++claimed;
    SCOPED_TRACE(to_string(graph.node(0).attributes) + " x=" + shape_to_string(x));
    expect_matches_reference(graph);
  }
  EXPECT_GT(claimed, 60);
}

TEST(XnnpackRandomWindowTest, EveryClaimedPoolingMatchesReference) {
  Sampler s;
  int claimed = 0;
  for (int trial = 0; trial < 160; ++trial) {
    const bool max_pool = s.pick(0, 1) == 0;
    const bool ceil_mode = s.pick(0, 1) == 1;
    const Shape x = {s.pick(1, 2), s.pick(1, 4), s.pick(1, 9), s.pick(1, 9)};
    auto window = random_window(s, x[2], x[3], max_pool, ceil_mode);
    if (!window) continue;
    Attributes attributes = attrs({{"kernel_shape", window->kernel},
                                   {"strides", window->strides},
                                   {"pads", window->pads},
                                   {"ceil_mode", std::int64_t{ceil_mode}}});
    if (max_pool) attributes.set("dilations", window->dilations);
    if (!max_pool) attributes.set("count_include_pad", s.pick(0, 1));
    GraphMaker g;
    ValueId in = g.input(x);
    Graph graph =
        g.finish(g.node(max_pool ? "MaxPool" : "AveragePool", {in},
                        {x[0], x[1], window->output_hw[0], window->output_hw[1]}, attributes));
    if (!xnnpack_backend().supports(graph, graph.node(0))) continue;
    ++claimed;
    SCOPED_TRACE(graph.node(0).op_type + " " + to_string(graph.node(0).attributes) +
                 " x=" + shape_to_string(x));
    expect_matches_reference(graph);
  }
  EXPECT_GT(claimed, 60);
}

TEST(XnnpackRandomWindowTest, EveryClaimedTransposedConvolutionMatchesReference) {
  Sampler s;
  int claimed = 0;
  for (int trial = 0; trial < 80; ++trial) {
    const std::int64_t groups = s.pick(1, 2);
    const std::int64_t channels = groups * s.pick(1, 3);
    const std::int64_t out_channels = groups * s.pick(1, 3);
    const Shape x = {s.pick(1, 2), channels, s.pick(1, 6), s.pick(1, 6)};
    const Ints kernel = {s.pick(1, 4), s.pick(1, 4)};
    const Ints strides = {s.pick(1, 3), s.pick(1, 3)};
    const Ints dilations = {s.pick(1, 2), s.pick(1, 2)};
    const Ints pads = {s.pick(0, 2), s.pick(0, 2), s.pick(0, 2), s.pick(0, 2)};
    const Ints adjustment = {s.pick(0, strides[0] - 1), s.pick(0, strides[1] - 1)};
    Shape y = {x[0], out_channels, 0, 0};
    for (int i = 0; i < 2; ++i) {
      y[2 + i] = strides[i] * (x[2 + i] - 1) + adjustment[i] + (kernel[i] - 1) * dilations[i] + 1 -
                 pads[i] - pads[2 + i];
    }
    if (y[2] <= 0 || y[3] <= 0) continue;
    GraphMaker g;
    ValueId in = g.input(x);
    ValueId weights = g.weights({channels, out_channels / groups, kernel[0], kernel[1]});
    Graph graph = g.finish(g.node("ConvTranspose", {in, weights, g.weights({out_channels})}, y,
                                  attrs({{"strides", strides},
                                         {"pads", pads},
                                         {"dilations", dilations},
                                         {"group", groups},
                                         {"output_padding", adjustment}})));
    if (!xnnpack_backend().supports(graph, graph.node(0))) continue;
    ++claimed;
    SCOPED_TRACE(to_string(graph.node(0).attributes) + " x=" + shape_to_string(x));
    expect_matches_reference(graph);
  }
  EXPECT_GT(claimed, 40);
}

}  // namespace
}  // namespace collage::testing
