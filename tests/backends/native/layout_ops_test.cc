#include "collage/backends/native/layout_ops.h"

#include <gtest/gtest.h>

#include <random>

#include "collage/backends/native/native_backend.h"
#include "collage/runtime/layout_convert.h"

namespace collage {
namespace {

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

Tensor random_tensor(const TensorType& type, std::uint32_t seed) {
  Tensor tensor = Tensor::allocate(type);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-3.0f, 3.0f);
  for (std::int64_t i = 0; i < tensor.numel(); ++i) tensor.data<float>()[i] = uniform(rng);
  return tensor;
}

Tensor converted(const Tensor& tensor, EdgeLayout from, EdgeLayout to) {
  Tensor result = Tensor::allocate(tensor.type());
  convert_edge_layout(tensor.type(), tensor.raw(), from, result.raw(), to, 2);
  return result;
}

Attributes ints(const std::string& name, std::vector<std::int64_t> values) {
  Attributes attributes;
  attributes.set(name, std::move(values));
  return attributes;
}

// Compiles `graph` on native with every input in `in` and every output in
// `out`, runs it on random inputs (converted into `in`) and expects, once
// converted back, the reference executor's outputs on the plain inputs.
void expect_matches_plain(const Graph& graph, EdgeLayout in, EdgeLayout out,
                          double tolerance = 1e-5) {
  CompileOptions options{2};
  std::vector<Tensor> plain_inputs;
  std::vector<Tensor> laid_inputs;
  for (std::size_t i = 0; i < graph.inputs().size(); ++i) {
    const TensorType& type = graph.type(graph.inputs()[i]);
    const EdgeLayout layout = edge_layout_fits(in, type) ? in : EdgeLayout::kPlain;
    options.input_layouts.push_back(layout);
    plain_inputs.push_back(random_tensor(type, static_cast<std::uint32_t>(i + 7)));
    laid_inputs.push_back(converted(plain_inputs.back(), EdgeLayout::kPlain, layout));
  }
  std::vector<Tensor> expected;
  std::vector<Tensor> actual;
  for (ValueId output : graph.outputs()) {
    const TensorType& type = graph.type(output);
    options.output_layouts.push_back(edge_layout_fits(out, type) ? out : EdgeLayout::kPlain);
    expected.push_back(Tensor::allocate(type));
    actual.push_back(Tensor::allocate(type));
  }
  compile_reference(graph, 1)->run(plain_inputs, expected);
  auto kernel = make_native_backend()->compile(graph, options);
  ASSERT_TRUE(kernel.ok()) << kernel.error();
  for (int run = 0; run < 2; ++run) {
    (*kernel)->run(laid_inputs, actual);
    for (std::size_t k = 0; k < actual.size(); ++k) {
      const Tensor plain = converted(actual[k], options.output_layouts[k], EdgeLayout::kPlain);
      for (std::int64_t i = 0; i < plain.numel(); ++i) {
        if (plain.data<float>()[i] == expected[k].data<float>()[i]) continue;  // infinities too
        ASSERT_NEAR(plain.data<float>()[i], expected[k].data<float>()[i], tolerance)
            << "output " << k << " element " << i << " in " << edge_layout_name(in) << " out "
            << edge_layout_name(out);
      }
    }
  }
}

constexpr EdgeLayout kLaidOut[] = {EdgeLayout::kChannelsLast, EdgeLayout::kBlocked8,
                                   EdgeLayout::kBlocked16};

// x [1,C,7,7] + bias [C,1,1] -> Relu -> * y [1,C,7,7] -> * 0.5 -> Sigmoid.
Graph elementwise_chain(std::int64_t c) {
  Graph g;
  g.opset = 13;
  ValueId x = g.add_input("x", f32({1, c, 7, 7}));
  ValueId y = g.add_input("y", f32({1, c, 7, 7}));
  ValueId bias = g.add_constant("bias", random_tensor(f32({c, 1, 1}), 3));
  ValueId half = g.add_constant("half", Tensor::from_vector<float>({0.5f}, {}));
  ValueId a = g.add_value("a", f32({1, c, 7, 7}));
  g.add_node("Add", {x, bias}, {a});
  ValueId r = g.add_value("r", f32({1, c, 7, 7}));
  g.add_node("Relu", {a}, {r});
  ValueId m = g.add_value("m", f32({1, c, 7, 7}));
  g.add_node("Mul", {r, y}, {m});
  ValueId h = g.add_value("h", f32({1, c, 7, 7}));
  g.add_node("Mul", {m, half}, {h});
  ValueId s = g.add_value("s", f32({1, c, 7, 7}));
  g.add_node("Sigmoid", {h}, {s});
  g.add_output(s);
  return g;
}

TEST(NativeLayoutTest, ElementwiseChainsWithBroadcastsRunInEveryLayout) {
  Graph graph = elementwise_chain(32);
  for (EdgeLayout layout : kLaidOut) {
    for (const Node& node : graph.nodes()) EXPECT_TRUE(native::runs_in_layout(graph, node, layout));
    expect_matches_plain(graph, layout, layout);
  }
}

// x [1,C,H,W] * gate [1,C,1,1] + bias [C,1,1], as a squeeze-and-excitation
// block scales its input: per-channel operands, which repeat every block of
// lanes (every pixel, channels-last) where the output is laid out.
Graph per_channel_scale(std::int64_t c, std::int64_t h) {
  Graph g;
  g.opset = 13;
  ValueId x = g.add_input("x", f32({1, c, h, h}));
  ValueId gate = g.add_input("gate", f32({1, c, 1, 1}));
  ValueId bias = g.add_constant("bias", random_tensor(f32({c, 1, 1}), 5));
  ValueId m = g.add_value("m", f32({1, c, h, h}));
  g.add_node("Mul", {x, gate}, {m});
  ValueId y = g.add_value("y", f32({1, c, h, h}));
  g.add_node("Add", {m, bias}, {y});
  g.add_output(y);
  return g;
}

// Large enough for several threads and blocks of the fused loop, at phases
// of the channels' period that differ from block to block (24 channels
// channels-last do not divide a block).
TEST(NativeLayoutTest, PerChannelOperandsOfLargeOutputsRunInEveryLayout) {
  for (std::int64_t c : {24, 48}) {
    Graph graph = per_channel_scale(c, 45);
    for (EdgeLayout layout : kLaidOut) expect_matches_plain(graph, layout, layout);
  }
}

// x [1,C,H,W] -> `op_type` with `attributes` -> y.
Graph pool(const std::string& op_type, std::int64_t c, std::int64_t h, Shape out,
           Attributes attributes) {
  Graph g;
  g.opset = 13;
  ValueId x = g.add_input("x", f32({1, c, h, h}));
  ValueId y = g.add_value("y", f32(std::move(out)));
  g.add_node(op_type, {x}, {y}, std::move(attributes));
  g.add_output(y);
  return g;
}

TEST(NativeLayoutTest, PoolsRunInEveryLayoutTheirChannelsFit) {
  Attributes strided = ints("kernel_shape", {3, 3});
  strided.set("strides", std::vector<std::int64_t>{2, 2});
  strided.set("pads", std::vector<std::int64_t>{0, 0, 1, 1});
  strided.set("ceil_mode", std::int64_t{1});
  Attributes same = ints("kernel_shape", {3, 3});
  same.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
  Attributes counted = same;
  counted.set("count_include_pad", std::int64_t{1});
  // 72 channels: runs of 64 and 8 in channels-last; 20: a tail of 4.
  for (std::int64_t c : {72, 16, 20}) {
    std::vector<Graph> graphs = {pool("MaxPool", c, 14, {1, c, 7, 7}, strided),
                                 pool("MaxPool", c, 9, {1, c, 9, 9}, same),
                                 pool("AveragePool", c, 9, {1, c, 9, 9}, same),
                                 pool("AveragePool", c, 9, {1, c, 9, 9}, counted),
                                 pool("GlobalAveragePool", c, 6, {1, c, 1, 1}, {}),
                                 pool("GlobalMaxPool", c, 6, {1, c, 1, 1}, {}),
                                 // Pixels enough to be summed in pieces.
                                 pool("GlobalAveragePool", c, 34, {1, c, 1, 1}, {}),
                                 pool("GlobalMaxPool", c, 34, {1, c, 1, 1}, {})};
    for (const Graph& graph : graphs) {
      for (EdgeLayout layout : kLaidOut) {
        const bool fits = edge_layout_fits(layout, graph.type(graph.inputs()[0]));
        EXPECT_EQ(native::runs_in_layout(graph, graph.node(0), layout), fits)
            << graph.node(0).op_type << " " << c << " " << edge_layout_name(layout);
        if (fits) expect_matches_plain(graph, layout, layout);
      }
    }
  }
}

TEST(NativeLayoutTest, ChannelConcatsRunInEveryLayout) {
  Graph g;
  g.opset = 13;
  ValueId a = g.add_input("a", f32({2, 16, 5, 5}));
  ValueId b = g.add_input("b", f32({2, 32, 5, 5}));
  ValueId c = g.add_input("c", f32({2, 8, 5, 5}));
  ValueId y = g.add_value("y", f32({2, 56, 5, 5}));
  Attributes axis;
  axis.set("axis", std::int64_t{1});
  g.add_node("Concat", {a, b, c}, {y}, axis);
  g.add_output(y);
  for (EdgeLayout layout : kLaidOut) {
    // c's 8 channels are no whole block of 16.
    EXPECT_EQ(native::runs_in_layout(g, g.node(0), layout), layout != EdgeLayout::kBlocked16);
    expect_matches_plain(g, layout, layout);
  }
}

// The halves of ShuffleNet's channel shuffle of a [2,32,5,5] Concat, as
// canonicalize leaves them: two Gathers of channels, 16 each; `selection`
// adds a Gather of 3 channels (one from each of three blocks of 8), a
// negative index among them, and one of a single channel.
Graph shuffled_halves(bool selection) {
  Graph g;
  g.opset = 13;
  ValueId a = g.add_input("a", f32({2, 16, 5, 5}));
  ValueId b = g.add_input("b", f32({2, 16, 5, 5}));
  ValueId cat = g.add_value("cat", f32({2, 32, 5, 5}));
  Attributes axis;
  axis.set("axis", std::int64_t{1});
  g.add_node("Concat", {a, b}, {cat}, axis);
  std::vector<std::int64_t> first, second;
  for (std::int64_t j = 0; j < 32; ++j) (j < 16 ? first : second).push_back(j % 2 * 16 + j / 2);
  auto gather = [&](const std::string& name, const std::vector<std::int64_t>& indices) {
    const auto count = static_cast<std::int64_t>(indices.size());
    ValueId index = g.add_constant(name + "/indices", Tensor::from_vector(indices, {count}));
    ValueId y = g.add_value(name, f32({2, count, 5, 5}));
    g.add_node("Gather", {cat, index}, {y}, axis);
    g.add_output(y);
  };
  gather("x1", first);
  gather("x2", second);
  if (selection) {
    gather("picked", {5, 30, -15});
    gather("one", {9});
  }
  return g;
}

TEST(NativeLayoutTest, ChannelGathersRunInEveryLayout) {
  for (bool selection : {false, true}) {
    Graph g = shuffled_halves(selection);
    for (EdgeLayout layout : kLaidOut) {
      for (const Node& node : g.nodes()) {
        // 3 gathered channels are no whole block; one channel is stored as plain.
        const bool fits = edge_layout_fits(layout, g.type(node.outputs[0])) ||
                          edge_layout_free(g.type(node.outputs[0]));
        EXPECT_EQ(native::runs_in_layout(g, node, layout),
                  fits && edge_layout_fits(layout, g.type(node.input(0))))
            << node.op_type << " " << edge_layout_name(layout);
      }
      expect_matches_plain(g, layout, layout);
    }
  }
}

// x [2,C,5,5] -> GroupNormalization (`groups`, scale and bias per channel) -> Relu.
// GroupNormalization with scale and bias per channel (opset 21), or per
// group (opsets 18 to 20) with `per_group`.
Graph group_norm(std::int64_t c, std::int64_t groups, bool per_group = false,
                 std::int64_t size = 5) {
  Graph g;
  g.opset = 13;
  ValueId x = g.add_input("x", f32({2, c, size, size}));
  const std::int64_t affine = per_group ? groups : c;
  ValueId scale = g.add_constant("scale", random_tensor(f32({affine}), 4));
  ValueId bias = g.add_constant("bias", random_tensor(f32({affine}), 5));
  ValueId n = g.add_value("n", f32({2, c, size, size}));
  Attributes attributes;
  attributes.set("num_groups", groups);
  attributes.set("epsilon", 1e-5f);
  g.add_node("GroupNormalization", {x, scale, bias}, {n}, attributes);
  ValueId y = g.add_value("y", f32({2, c, size, size}));
  g.add_node("Relu", {n}, {y});
  g.add_output(y);
  return g;
}

// x [1,C,H,W] -> Resize by `scales` (N and C kept) in `mode`.
Graph resize(std::int64_t c, std::int64_t h, std::int64_t w, float scale_h, float scale_w,
             const std::string& mode, const std::string& coordinates) {
  Graph g;
  g.opset = 13;
  ValueId x = g.add_input("x", f32({1, c, h, w}));
  ValueId scales =
      g.add_constant("scales", Tensor::from_vector<float>({1.0f, 1.0f, scale_h, scale_w}, {4}));
  const auto out_h = static_cast<std::int64_t>(static_cast<float>(h) * scale_h);
  const auto out_w = static_cast<std::int64_t>(static_cast<float>(w) * scale_w);
  ValueId y = g.add_value("y", f32({1, c, out_h, out_w}));
  Attributes attributes;
  attributes.set("mode", mode);
  attributes.set("coordinate_transformation_mode", coordinates);
  g.add_node("Resize", {x, kNoValue, scales}, {y}, attributes);
  g.add_output(y);
  return g;
}

// An FPN's 2x upsampling (nearest and bilinear), a shrink and a cubic one,
// each in every layout its channels fit.
TEST(NativeLayoutTest, ResizesOfHeightAndWidthRunInEveryLayout) {
  const Graph graphs[] = {resize(32, 10, 12, 2.0f, 2.0f, "nearest", "asymmetric"),
                          resize(32, 10, 12, 2.0f, 2.0f, "linear", "half_pixel"),
                          resize(48, 16, 12, 0.5f, 1.5f, "linear", "align_corners"),
                          resize(16, 7, 9, 2.0f, 3.0f, "cubic", "half_pixel")};
  for (const Graph& graph : graphs) {
    for (EdgeLayout layout : kLaidOut) {
      for (const Node& node : graph.nodes()) {
        EXPECT_TRUE(native::runs_in_layout(graph, node, layout));
      }
      expect_matches_plain(graph, layout, layout);
    }
  }
}

// A Resize of the channels does not run on them stored in runs of channels.
TEST(NativeLayoutTest, AResizeOfTheChannelsDoesNotRunInALayout) {
  Graph g;
  g.opset = 13;
  ValueId x = g.add_input("x", f32({1, 16, 4, 4}));
  ValueId scales =
      g.add_constant("scales", Tensor::from_vector<float>({1.0f, 2.0f, 1.0f, 1.0f}, {4}));
  ValueId y = g.add_value("y", f32({1, 32, 4, 4}));
  g.add_node("Resize", {x, kNoValue, scales}, {y});
  g.add_output(y);
  EXPECT_FALSE(native::runs_in_layout(g, g.node(0), EdgeLayout::kBlocked16));
  EXPECT_FALSE(native::runs_in_layout(g, g.node(0), EdgeLayout::kChannelsLast));
}

// Images of more pixels than a task sums in float at a time, and channels
// that channels-last takes sixteen, eight and one lane at a time (28).
TEST(NativeLayoutTest, GroupNormalizationOfLargerImagesRunsInEveryLayout) {
  expect_matches_plain(group_norm(48, 4, false, 23), EdgeLayout::kBlocked16,
                       EdgeLayout::kBlocked16);
  expect_matches_plain(group_norm(48, 4, false, 23), EdgeLayout::kBlocked8, EdgeLayout::kBlocked8);
  for (std::int64_t channels : {48, 28}) {
    expect_matches_plain(group_norm(channels, 2, false, 23), EdgeLayout::kChannelsLast,
                         EdgeLayout::kChannelsLast);
  }
}

TEST(NativeLayoutTest, GroupNormalizationRunsInEveryLayoutWhateverTheGroupSize) {
  // Groups of 2 channels (within a block), of 16 (whole blocks) and one
  // group of all 48; scale and bias per channel, and per group.
  for (auto [channels, groups] : {std::pair{32, 16}, std::pair{32, 2}, std::pair{48, 1}}) {
    for (bool per_group : {false, true}) {
      Graph graph = group_norm(channels, groups, per_group);
      for (EdgeLayout layout : kLaidOut) {
        for (const Node& node : graph.nodes()) {
          EXPECT_TRUE(native::runs_in_layout(graph, node, layout));
        }
        expect_matches_plain(graph, layout, layout);
      }
    }
  }
}

// A chain of unary ops after a GroupNormalization runs in its closing
// pass, block by block of pixels (23x23 images: several blocks of 4096
// floats per run of lanes, the last one short); with the normalized value
// also a graph output, the chain runs on its own and the value is stored
// as it is.
TEST(NativeLayoutTest, AGroupNormalizationsActivationRunsInItsClosingPass) {
  const TensorType type = f32({2, 48, 23, 23});
  for (bool also_output : {false, true}) {
    Graph g;
    g.opset = 13;
    ValueId x = g.add_input("x", type);
    ValueId scale = g.add_constant("scale", random_tensor(f32({48}), 4));
    ValueId bias = g.add_constant("bias", random_tensor(f32({48}), 5));
    ValueId n = g.add_value("n", type);
    Attributes attributes;
    attributes.set("num_groups", std::int64_t{4});
    attributes.set("epsilon", 1e-5f);
    g.add_node("GroupNormalization", {x, scale, bias}, {n}, attributes);
    ValueId s = g.add_value("s", type);
    Attributes alpha;
    alpha.set("alpha", 1.0f);
    g.add_node("Swish", {n}, {s}, alpha);
    ValueId r = g.add_value("r", type);
    g.add_node("Relu", {s}, {r});
    g.add_output(r);
    if (also_output) g.add_output(n);
    for (EdgeLayout layout : kLaidOut) expect_matches_plain(g, layout, layout);
  }
}

// x [2,C,H,W] -> depthwise Conv (k x k, `attributes`, bias or not) -> Swish.
Graph depthwise(std::int64_t c, std::int64_t h, std::int64_t w, std::int64_t k, Shape out,
                Attributes attributes, bool with_bias) {
  Graph g;
  g.opset = 13;
  ValueId x = g.add_input("x", f32({2, c, h, w}));
  ValueId weights = g.add_constant("w", random_tensor(f32({c, 1, k, k}), 6));
  std::vector<ValueId> inputs = {x, weights};
  if (with_bias) inputs.push_back(g.add_constant("b", random_tensor(f32({c}), 8)));
  attributes.set("group", c);
  attributes.set("kernel_shape", std::vector<std::int64_t>{k, k});
  ValueId y = g.add_value("y", f32(out));
  g.add_node("Conv", inputs, {y}, std::move(attributes));
  ValueId s = g.add_value("s", f32(out));
  Attributes alpha;
  alpha.set("alpha", 1.0f);
  g.add_node("Swish", {y}, {s}, alpha);
  g.add_output(s);
  return g;
}

TEST(NativeLayoutTest, DepthwiseConvolutionsRunInEveryLayoutTheirChannelsFit) {
  Attributes same = ints("pads", {1, 1, 1, 1});
  Attributes strided = ints("pads", {1, 1, 1, 1});
  strided.set("strides", std::vector<std::int64_t>{2, 2});
  Attributes uneven = ints("pads", {2, 0, 1, 2});  // 5x5, padded unevenly, stride 2
  uneven.set("strides", std::vector<std::int64_t>{2, 2});
  Attributes dilated = ints("pads", {2, 2, 2, 2});
  dilated.set("dilations", std::vector<std::int64_t>{2, 2});
  // Dilated down the rows only: the columns still go in blocks, from a
  // padded copy on a narrow image.
  Attributes rows_dilated = ints("pads", {2, 1, 2, 1});
  rows_dilated.set("dilations", std::vector<std::int64_t>{2, 1});
  // 48 channels: three blocks of 16, six of 8, runs of 32 + 16 in
  // channels-last; 40: 32 + 8; 12: a tail of 4 lanes.
  for (std::int64_t c : {48, 40, 12}) {
    std::vector<Graph> graphs = {
        depthwise(c, 9, 13, 3, {2, c, 9, 13}, same, true),
        depthwise(c, 9, 13, 3, {2, c, 5, 7}, strided, false),
        depthwise(c, 12, 11, 5, {2, c, 6, 5}, uneven, true),
        depthwise(c, 10, 10, 3, {2, c, 10, 10}, dilated, true),
        // Narrower than the window: no pixel has every tap inside.
        depthwise(c, 2, 3, 5, {2, c, 2, 3}, ints("pads", {2, 2, 2, 2}), true),
        // Mostly border (copied with padding, eight output rows a copy) and
        // rows of 7, 20 and 28 inner pixels, in blocks of even sizes.
        depthwise(c, 7, 7, 5, {2, c, 7, 7}, ints("pads", {2, 2, 2, 2}), true),
        depthwise(c, 19, 20, 5, {2, c, 19, 20}, ints("pads", {2, 2, 2, 2}), false),
        depthwise(c, 4, 30, 3, {2, c, 4, 30}, same, true),
        depthwise(c, 9, 7, 3, {2, c, 9, 7}, rows_dilated, true),
    };
    for (const Graph& graph : graphs) {
      for (EdgeLayout layout : kLaidOut) {
        const bool fits = edge_layout_fits(layout, graph.type(graph.inputs()[0]));
        EXPECT_EQ(native::runs_in_layout(graph, graph.node(0), layout), fits)
            << c << " " << edge_layout_name(layout);
        if (fits) expect_matches_plain(graph, layout, layout);
      }
    }
  }
}

TEST(NativeLayoutTest, ADepthwiseConvolutionsOutputReadElsewhereIsStoredWithoutTheActivation) {
  // The convolution's output is also a graph output, and a second chain
  // (Relu, Sigmoid) reads it: neither can run in its store.
  Graph g = depthwise(32, 9, 9, 3, {2, 32, 9, 9}, ints("pads", {1, 1, 1, 1}), true);
  const ValueId conv_out = g.node(0).outputs[0];
  ValueId r = g.add_value("r", f32({2, 32, 9, 9}));
  g.add_node("Relu", {conv_out}, {r});
  ValueId s = g.add_value("s2", f32({2, 32, 9, 9}));
  g.add_node("Sigmoid", {r}, {s});
  g.add_output(s);
  g.add_output(conv_out);
  for (EdgeLayout layout : kLaidOut) expect_matches_plain(g, layout, layout);
}

// x [2,C,H,W] -> Conv 3x3 to K channels (pads 1 or `pads`) -> Relu.
Graph winograd_conv(std::int64_t c, std::int64_t k, std::int64_t h, std::int64_t w,
                    std::vector<std::int64_t> pads, bool with_bias) {
  Graph g;
  g.opset = 13;
  ValueId x = g.add_input("x", f32({2, c, h, w}));
  std::vector<ValueId> inputs = {x, g.add_constant("w", random_tensor(f32({k, c, 3, 3}), 6))};
  if (with_bias) inputs.push_back(g.add_constant("b", random_tensor(f32({k}), 8)));
  const Shape out = {2, k, h + pads[0] + pads[2] - 2, w + pads[1] + pads[3] - 2};
  ValueId y = g.add_value("y", f32(out));
  g.add_node("Conv", inputs, {y}, ints("pads", std::move(pads)));
  ValueId r = g.add_value("r", f32(out));
  g.add_node("Relu", {y}, {r});
  g.add_output(r);
  return g;
}

TEST(NativeLayoutTest, WinogradConvolutionsRunInEveryLayoutTheirChannelsFit) {
  // Eight channels to a vector: 24 channels fit channels-last and blocks of
  // 8, not of 16; 20 fit no layout. The Relu runs in the convolution's
  // store. 25 x 25 tiles take two chunks.
  const std::vector<Graph> graphs = {
      winograd_conv(16, 32, 17, 23, {1, 1, 1, 1}, true),
      winograd_conv(24, 40, 18, 19, {2, 0, 1, 2}, false),
      winograd_conv(16, 16, 100, 100, {1, 1, 1, 1}, true),
      winograd_conv(20, 16, 17, 17, {1, 1, 1, 1}, true),
  };
  for (const Graph& graph : graphs) {
    const std::int64_t c = graph.type(graph.inputs()[0]).shape[1];
    for (EdgeLayout layout : kLaidOut) {
      const bool fits = edge_layout_fits(layout, graph.type(graph.inputs()[0])) && c % 8 == 0;
      EXPECT_EQ(native::runs_in_layout(graph, graph.node(0), layout), fits)
          << c << " " << edge_layout_name(layout);
      // Winograd's rounding, summed in another order than the plain
      // kernel's: a few units in the sixth digit of outputs up to about 10.
      if (fits) expect_matches_plain(graph, layout, layout, 1e-4);
    }
  }
}

TEST(NativeLayoutTest, EdgesInAnotherLayoutThanTheKernelComputesInAreConverted) {
  Graph graph = elementwise_chain(16);
  expect_matches_plain(graph, EdgeLayout::kChannelsLast, EdgeLayout::kPlain);
  expect_matches_plain(graph, EdgeLayout::kPlain, EdgeLayout::kBlocked16);
  expect_matches_plain(graph, EdgeLayout::kBlocked8, EdgeLayout::kChannelsLast);
}

// x [1,16,6,6] -> Conv (3x3 weights of `weights_in` channels, `group`) -> Relu.
Graph conv_relu(std::int64_t weights_in, std::int64_t group) {
  Graph g;
  g.opset = 13;
  ValueId x = g.add_input("x", f32({1, 16, 6, 6}));
  ValueId w = g.add_constant("w", random_tensor(f32({16, weights_in, 3, 3}), 5));
  ValueId c = g.add_value("c", f32({1, 16, 4, 4}));
  Attributes grouped;
  grouped.set("group", group);
  g.add_node("Conv", {x, w}, {c}, grouped);
  ValueId r = g.add_value("r", f32({1, 16, 4, 4}));
  g.add_node("Relu", {c}, {r});
  g.add_output(r);
  return g;
}

TEST(NativeLayoutTest, APartitionWithAnOpThatDoesNotRunInALayoutConvertsItsEdges) {
  // A dense convolution with too few tiles for Winograd, and one of groups
  // of two channels: neither runs in a layout.
  for (Graph g : {conv_relu(16, 1), conv_relu(2, 8)}) {
    EXPECT_FALSE(native::runs_in_layout(g, g.node(0), EdgeLayout::kChannelsLast));
    EXPECT_FALSE(native::runs_in_layout(g, g.node(0), EdgeLayout::kBlocked16));
    EXPECT_FALSE(follows_layouts(*make_native_backend(), g));
    for (EdgeLayout layout : kLaidOut) expect_matches_plain(g, layout, layout);
  }
}

TEST(NativeLayoutTest, NodesWithoutLaidOutValuesRunInAnyLayout) {
  Graph g;
  g.opset = 13;
  ValueId x = g.add_input("x", f32({1, 24, 1, 1}));
  ValueId y = g.add_value("y", f32({1, 24}));
  g.add_node("Flatten", {x}, {y});
  g.add_output(y);
  EXPECT_TRUE(native::runs_in_layout(g, g.node(0), EdgeLayout::kBlocked16));
  EXPECT_TRUE(follows_layouts(*make_native_backend(), g));
}

TEST(NativeLayoutTest, LaidOutDimsBroadcastAgainstTheStoredOutput) {
  EXPECT_EQ(native::laid_out_dims({1, 32, 7, 5}, EdgeLayout::kChannelsLast), (Shape{1, 7, 5, 32}));
  EXPECT_EQ(native::laid_out_dims({1, 32, 7, 5}, EdgeLayout::kBlocked16), (Shape{1, 2, 7, 5, 16}));
  EXPECT_EQ(native::laid_out_dims({32, 1, 1}, EdgeLayout::kBlocked8), (Shape{1, 4, 1, 1, 8}));
  EXPECT_EQ(native::laid_out_dims({5}, EdgeLayout::kBlocked8), (Shape{1, 1, 1, 5, 1}));
  EXPECT_EQ(native::laid_out_dims({5}, EdgeLayout::kChannelsLast), (Shape{1, 1, 5, 1}));
}

}  // namespace
}  // namespace collage
