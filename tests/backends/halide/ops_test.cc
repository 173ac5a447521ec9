// Every op the halide backend lowers, alone, against the reference executor,
// over grids of shapes and attributes.
#include <gtest/gtest.h>

#include <string>

#include "backends/halide/halide_check.h"

namespace collage::testing {
namespace {

TEST(HalideOps, UnaryElementwise) {
  // One kernel, each op an output of its own.
  OpGraphBuilder b;
  const ValueId x = b.input({2, 3, 5, 19});
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "Floor", "Ceil", "Erf",
                         "Identity", "HardSwish", "Softplus"}) {
    b.graph().add_output(b.node(op, {x}, {2, 3, 5, 19}));
  }
  expect_halide_matches(b.finish(kNoValue), 2, 1e-5, -4.0f, 4.0f);
}

TEST(HalideOps, UnaryWithAttributes) {
  struct Case {
    const char* op;
    Attributes attributes;
  };
  const std::vector<Case> cases = {
      {"LeakyRelu", attrs({{"alpha", 0.1f}})},
      {"HardSigmoid", attrs({{"alpha", 0.3f}, {"beta", 0.4f}})},
      {"Swish", attrs({{"alpha", 1.5f}})},
      {"Elu", attrs({{"alpha", 0.7f}})},
      {"Gelu", attrs({})},
      {"Gelu", attrs({{"approximate", std::string("tanh")}})},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    OpGraphBuilder b;
    const ValueId x = b.input({4, 33});
    expect_halide_matches(b.finish(b.node(c.op, {x}, {4, 33}, c.attributes)), 2, 1e-5, -5.0f, 5.0f);
  }
}

TEST(HalideOps, PositiveDomainUnary) {
  for (const char* op : {"Log", "Sqrt", "Reciprocal"}) {
    SCOPED_TRACE(op);
    OpGraphBuilder b;
    const ValueId x = b.input({3, 40});
    expect_halide_matches(b.finish(b.node(op, {x}, {3, 40})), 2, 1e-5, 0.5f, 3.0f);
  }
}

TEST(HalideOps, ClipWithConstantBounds) {
  OpGraphBuilder b;
  const ValueId x = b.input({2, 8, 9});
  const ValueId y = b.node("Clip", {x, b.scalar(-0.25f), b.scalar(0.5f)}, {2, 8, 9});
  expect_halide_matches(b.finish(y));
  OpGraphBuilder only_max;
  const ValueId x2 = only_max.input({17});
  expect_halide_matches(
      only_max.finish(only_max.node("Clip", {x2, kNoValue, only_max.scalar(0.1f)}, {17})));
}

TEST(HalideOps, BinaryBroadcasting) {
  struct Case {
    Shape a, b, out;
  };
  const std::vector<Case> shapes = {
      {{2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}},
      {{2, 3, 4, 5}, {5}, {2, 3, 4, 5}},
      {{2, 3, 4, 5}, {3, 1, 1}, {2, 3, 4, 5}},
      {{1, 3, 1, 5}, {2, 1, 4, 1}, {2, 3, 4, 5}},
      {{7, 1}, {1, 9}, {7, 9}},
      {{}, {6, 2}, {6, 2}},
  };
  // One kernel per shape and input range, each op an output of its own:
  // every op is checked on every shape, at a fraction of the compiles.
  const std::vector<std::pair<std::vector<std::string>, float>> groups = {
      {{"Add", "Sub", "Mul", "Max", "Min", "PRelu"}, -1.0f},
      {{"Div", "Pow"}, 0.5f},
  };
  for (const auto& [ops, low] : groups) {
    for (const Case& c : shapes) {
      SCOPED_TRACE(::testing::PrintToString(ops) + " on " + ::testing::PrintToString(c.out));
      OpGraphBuilder b;
      const ValueId x = b.input(c.a);
      const ValueId y = b.input(c.b);
      for (const std::string& op : ops) {
        if (op == "PRelu" && c.b.size() > c.a.size()) continue;
        b.graph().add_output(b.node(op, {x, y}, c.out));
      }
      expect_halide_matches(b.finish(kNoValue), 2, 1e-5, low, 2.0f);
    }
  }
}

TEST(HalideOps, BinaryWithConstants) {
  OpGraphBuilder b;
  const ValueId x = b.input({1, 16, 7, 7});
  const ValueId scaled = b.node("Mul", {x, b.weights({16, 1, 1})}, {1, 16, 7, 7});
  const ValueId shifted = b.node("Add", {scaled, b.scalar(3.0f)}, {1, 16, 7, 7});
  const ValueId squared = b.node("Pow", {shifted, b.scalar(2.0f)}, {1, 16, 7, 7});
  expect_halide_matches(b.finish(squared));
}

struct ConvCase {
  Shape input;
  Shape weights;
  Attributes attributes;
  Shape output;
  bool bias = true;
};

TEST(HalideOps, ConvolutionGrid) {
  const std::vector<ConvCase> cases = {
      // depthwise 3x3, stride 1 and 2, with padding
      {{1, 8, 10, 12},
       {8, 1, 3, 3},
       attrs({{"group", std::int64_t{8}}, {"pads", Ints{1, 1, 1, 1}}}),
       {1, 8, 10, 12}},
      {{1, 8, 11, 11},
       {8, 1, 3, 3},
       attrs({{"group", std::int64_t{8}}, {"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}),
       {1, 8, 6, 6}},
      // depthwise 5x5 with a channel multiplier, no bias
      {{2, 4, 9, 9},
       {8, 1, 5, 5},
       attrs({{"group", std::int64_t{4}}, {"pads", Ints{2, 2, 2, 2}}}),
       {2, 8, 9, 9},
       false},
      // grouped 3x3
      {{1, 8, 7, 9}, {12, 2, 3, 3}, attrs({{"group", std::int64_t{4}}}), {1, 12, 5, 7}},
      // small dense 1x1 and 3x3 with dilation and asymmetric padding
      {{1, 16, 6, 6}, {24, 16, 1, 1}, attrs({}), {1, 24, 6, 6}},
      {{1, 3, 9, 9},
       {5, 3, 3, 3},
       attrs({{"dilations", Ints{2, 2}}, {"pads", Ints{2, 1, 0, 2}}}),
       {1, 5, 7, 8}},
      // SAME_UPPER
      {{1, 6, 8, 8},
       {6, 1, 3, 3},
       attrs({{"group", std::int64_t{6}},
              {"auto_pad", std::string("SAME_UPPER")},
              {"strides", Ints{2, 2}}}),
       {1, 6, 4, 4}},
  };
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.weights));
    OpGraphBuilder b;
    const ValueId x = b.input(c.input);
    std::vector<ValueId> inputs{x, b.weights(c.weights)};
    if (c.bias) inputs.push_back(b.weights({c.weights[0]}));
    expect_halide_matches(b.finish(b.node("Conv", inputs, c.output, c.attributes)));
  }
}

TEST(HalideOps, LargeDenseConvolutionIsLeftToTheLibraries) {
  OpGraphBuilder b;
  const ValueId x = b.input({1, 64, 8, 8});
  const ValueId y = b.node("Conv", {x, b.weights({64, 64, 3, 3})}, {1, 64, 6, 6});
  const Graph graph = b.finish(y);
  EXPECT_FALSE(halide_backend().supports(graph, graph.nodes()[0]));
}

TEST(HalideOps, PoolingGrid) {
  struct Case {
    const char* op;
    Attributes attributes;
    Shape output;
  };
  const Shape input{1, 3, 9, 10};
  const std::vector<Case> cases = {
      {"MaxPool", attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}), {1, 3, 4, 5}},
      {"MaxPool",
       attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}),
       {1, 3, 5, 5}},
      {"MaxPool",
       attrs(
           {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", std::int64_t{1}}}),
       {1, 3, 4, 5}},
      {"AveragePool",
       attrs({{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}),
       {1, 3, 9, 10}},
      {"AveragePool",
       attrs({{"kernel_shape", Ints{3, 3}},
              {"pads", Ints{1, 1, 1, 1}},
              {"count_include_pad", std::int64_t{1}}}),
       {1, 3, 9, 10}},
      {"AveragePool",
       attrs({{"kernel_shape", Ints{2, 3}}, {"strides", Ints{2, 1}}, {"dilations", Ints{2, 2}}}),
       {1, 3, 4, 6}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    OpGraphBuilder b;
    const ValueId x = b.input(input);
    expect_halide_matches(b.finish(b.node(c.op, {x}, c.output, c.attributes)));
  }
}

TEST(HalideOps, GlobalPools) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    SCOPED_TRACE(op);
    OpGraphBuilder b;
    const ValueId x = b.input({2, 5, 7, 9});
    expect_halide_matches(b.finish(b.node(op, {x}, {2, 5, 1, 1})));
  }
}

TEST(HalideOps, Reductions) {
  struct Case {
    Ints axes;
    bool keep;
    Shape output;
  };
  const std::vector<Case> cases = {{{-1}, true, {2, 3, 4, 1}},
                                   {{1}, false, {2, 4, 6}},
                                   {{2, 3}, true, {2, 3, 1, 1}},
                                   {{}, false, {}}};
  // One kernel per case, each op an output of its own.
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.axes));
    OpGraphBuilder b(13);
    const ValueId x = b.input({2, 3, 4, 6});
    for (const char* op :
         {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceSumSquare", "ReduceL2"}) {
      Attributes a = attrs({{"keepdims", std::int64_t{c.keep ? 1 : 0}}});
      std::vector<ValueId> inputs{x};
      if (std::string(op) == "ReduceSum") {
        if (!c.axes.empty()) inputs.push_back(b.ints(c.axes));
      } else if (!c.axes.empty()) {
        a = attrs({{"keepdims", std::int64_t{c.keep ? 1 : 0}}, {"axes", c.axes}});
      }
      b.graph().add_output(b.node(op, inputs, c.output, a));
    }
    expect_halide_matches(b.finish(kNoValue));
  }
}

TEST(HalideOps, AReductionOverAnotherOnesResultWithARaggedVectorTail) {
  // A variance over 5 columns: the mean, then the mean of squared
  // deviations. Vectorizing the second reduction's ragged tail came out
  // doubled in four columns and 0 in the fifth.
  OpGraphBuilder b;
  const ValueId x = b.input({1024, 5});
  const ValueId mean =
      b.node("ReduceMean", {x}, {1, 5},
             attrs({{"keepdims", std::int64_t{1}}, {"axes", std::vector<std::int64_t>{0}}}));
  const ValueId deviation = b.node("Sub", {x, mean}, {1024, 5});
  const ValueId square = b.node("Mul", {deviation, deviation}, {1024, 5});
  const ValueId variance =
      b.node("ReduceMean", {square}, {5},
             attrs({{"keepdims", std::int64_t{0}}, {"axes", std::vector<std::int64_t>{0}}}));
  expect_halide_matches(b.finish(variance));
}

TEST(HalideOps, MatMulAndGemm) {
  {
    OpGraphBuilder b;
    const ValueId x = b.input({2, 3, 5, 7});
    const ValueId y = b.node("MatMul", {x, b.weights({7, 20})}, {2, 3, 5, 20});
    expect_halide_matches(b.finish(y));
  }
  {
    OpGraphBuilder b;
    const ValueId x = b.input({4, 6, 9});
    const ValueId w = b.input({1, 9, 5});
    expect_halide_matches(b.finish(b.node("MatMul", {x, w}, {4, 6, 5})));
  }
  for (int trans_a = 0; trans_a < 2; ++trans_a) {
    for (int trans_b = 0; trans_b < 2; ++trans_b) {
      OpGraphBuilder b;
      const ValueId a = b.input(trans_a ? Shape{8, 3} : Shape{3, 8});
      const ValueId w = b.weights(trans_b ? Shape{17, 8} : Shape{8, 17});
      const ValueId y = b.node("Gemm", {a, w, b.weights({17})}, {3, 17},
                               attrs({{"transA", std::int64_t{trans_a}},
                                      {"transB", std::int64_t{trans_b}},
                                      {"alpha", 0.5f},
                                      {"beta", 2.0f}}));
      expect_halide_matches(b.finish(y));
    }
  }
}

TEST(HalideOps, SoftmaxAndLayerNormalization) {
  for (std::int64_t axis : {-1, 1}) {
    OpGraphBuilder b;
    const ValueId x = b.input({2, 7, 19});
    expect_halide_matches(b.finish(b.node("Softmax", {x}, {2, 7, 19}, attrs({{"axis", axis}}))), 2,
                          1e-5, -5.0f, 5.0f);
  }
  for (std::int64_t axis : {-1, -2}) {
    OpGraphBuilder b;
    const ValueId x = b.input({2, 5, 24});
    const Shape normalized = axis == -1 ? Shape{24} : Shape{5, 24};
    const ValueId y =
        b.node("LayerNormalization", {x, b.weights(normalized), b.weights(normalized)}, {2, 5, 24},
               attrs({{"axis", axis}, {"epsilon", 1e-5f}}));
    expect_halide_matches(b.finish(y));
  }
}

TEST(HalideOps, BatchNormalization) {
  OpGraphBuilder b;
  const ValueId x = b.input({2, 6, 5, 5});
  const ValueId y =
      b.node("BatchNormalization",
             {x, b.weights({6}), b.weights({6}), b.weights({6}), b.weights({6}, 0.5f, 2.0f)},
             {2, 6, 5, 5});
  expect_halide_matches(b.finish(y));
}

TEST(HalideOps, DataMovement) {
  {
    OpGraphBuilder b;
    const ValueId x = b.input({2, 3, 4, 5});
    const ValueId t = b.node("Transpose", {x}, {2, 4, 5, 3}, attrs({{"perm", Ints{0, 2, 3, 1}}}));
    const ValueId r = b.node("Reshape", {t, b.ints({8, 15})}, {8, 15});
    const ValueId f = b.node("Flatten", {x}, {2, 60}, attrs({{"axis", std::int64_t{1}}}));
    b.output(r);
    b.output(f);
    expect_halide_matches(b.finish(f));
  }
  {
    // Channel shuffle: reshape, transpose, reshape.
    OpGraphBuilder b;
    const ValueId x = b.input({1, 12, 3, 4});
    const ValueId r = b.node("Reshape", {x, b.ints({1, 3, 4, 3, 4})}, {1, 3, 4, 3, 4});
    const ValueId t =
        b.node("Transpose", {r}, {1, 4, 3, 3, 4}, attrs({{"perm", Ints{0, 2, 1, 3, 4}}}));
    expect_halide_matches(b.finish(b.node("Reshape", {t, b.ints({1, 12, 3, 4})}, {1, 12, 3, 4})));
  }
  {
    OpGraphBuilder b;
    const ValueId x = b.input({1, 3, 4, 4});
    const ValueId y = b.input({1, 5, 4, 4});
    const ValueId c =
        b.node("Concat", {x, y, x}, {1, 11, 4, 4}, attrs({{"axis", std::int64_t{1}}}));
    expect_halide_matches(b.finish(c));
  }
  {
    OpGraphBuilder b;
    const ValueId x = b.input({2, 10, 3});
    Graph& g = b.graph();
    const ValueId a = g.add_value("a", f32({2, 4, 3}));
    const ValueId c = g.add_value("c", f32({2, 6, 3}));
    g.add_node("Split", {x, b.ints({4, 6})}, {a, c}, attrs({{"axis", std::int64_t{1}}}));
    g.add_output(a);
    g.add_output(c);
    expect_halide_matches(g);
  }
  {
    OpGraphBuilder b;
    const ValueId x = b.input({4, 10, 6});
    const ValueId s = b.node(
        "Slice", {x, b.ints({1, -1, 0}), b.ints({3, 1, 6}), b.ints({0, 1, 2}), b.ints({1, -2, 3})},
        {2, 4, 2});
    expect_halide_matches(b.finish(s));
  }
}

TEST(HalideOps, PadModes) {
  for (const char* mode : {"constant", "edge", "reflect"}) {
    SCOPED_TRACE(mode);
    OpGraphBuilder b;
    const ValueId x = b.input({1, 2, 5, 6});
    const ValueId y = b.node("Pad", {x, b.ints({0, 0, 2, 1, 0, 0, 1, 3}), b.scalar(0.5f)},
                             {1, 2, 8, 10}, attrs({{"mode", std::string(mode)}}));
    expect_halide_matches(b.finish(y));
  }
}

}  // namespace
}  // namespace collage::testing
