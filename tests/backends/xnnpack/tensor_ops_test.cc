// Fully connected, softmax, padding, reshapes and depth-to-space on XNNPACK
// against the native reference.
#include <gtest/gtest.h>

#include "backends/xnnpack/reference_check.h"

namespace collage::testing {
namespace {

TEST(XnnpackGemmTest, MatchesReferenceForTransposesScalesAndBiasShapes) {
  const std::int64_t m = 5, k = 7, n = 3;
  for (std::int64_t trans_b : {0, 1}) {
    for (const Shape& c_shape : {Shape{}, Shape{n}, Shape{1, n}, Shape{m, n}, Shape{m, 1}}) {
      SCOPED_TRACE(::testing::Message()
                   << "transB=" << trans_b << " C=" << shape_to_string(c_shape));
      GraphMaker g;
      ValueId a = g.input({m, k});
      ValueId b = g.weights(trans_b ? Shape{n, k} : Shape{k, n});
      ValueId c = g.weights(c_shape);
      expect_matches_reference(
          g.finish(g.node("Gemm", {a, b, c}, {m, n},
                          attrs({{"transB", trans_b}, {"alpha", 0.7f}, {"beta", 1.3f}}))));
    }
  }
}

TEST(XnnpackGemmTest, MatchesReferenceWithoutBiasAndWithComputedBias) {
  GraphMaker g;
  ValueId a = g.input({4, 9});
  ValueId y = g.node("Gemm", {a, g.weights({9, 6})}, {4, 6});
  expect_matches_reference(g.finish(y));

  GraphMaker h;
  ValueId a2 = h.input({4, 9});
  ValueId c = h.input({4, 6});
  expect_matches_reference(h.finish(h.node("Gemm", {a2, h.weights({9, 6}), c}, {4, 6})));
}

TEST(XnnpackGemmTest, ComputedWeightsAreNotSupported) {
  GraphMaker g;
  ValueId a = g.input({4, 9});
  ValueId b = g.input({9, 6});
  Graph graph = g.finish(g.node("Gemm", {a, b}, {4, 6}));
  EXPECT_FALSE(xnnpack_backend().supports(graph, graph.node(0)));
}

TEST(XnnpackMatMulTest, MatchesReferenceForBatchedLeftOperands) {
  for (const Shape& a_shape : {Shape{5, 8}, Shape{2, 5, 8}, Shape{2, 3, 4, 8}}) {
    SCOPED_TRACE(shape_to_string(a_shape));
    GraphMaker g;
    ValueId a = g.input(a_shape);
    Shape y = a_shape;
    y.back() = 6;
    expect_matches_reference(g.finish(g.node("MatMul", {a, g.weights({8, 6})}, y)));
  }
}

TEST(XnnpackMatMulTest, BatchedRightOperandIsNotSupported) {
  GraphMaker g;
  ValueId a = g.input({2, 5, 8});
  Graph graph = g.finish(g.node("MatMul", {a, g.weights({2, 8, 6})}, {2, 5, 6}));
  EXPECT_FALSE(xnnpack_backend().supports(graph, graph.node(0)));
}

TEST(XnnpackSoftmaxTest, CoercedSoftmaxBeforeOpset13MatchesReferenceForEveryAxis) {
  for (std::int64_t axis : {0, 1, 2, 3, -1}) {
    SCOPED_TRACE(axis);
    GraphMaker g(11);
    ValueId in = g.input({2, 3, 4, 5});
    expect_matches_reference(
        g.finish(g.node("Softmax", {in}, {2, 3, 4, 5}, attrs({{"axis", axis}}))));
  }
}

TEST(XnnpackSoftmaxTest, SingleAxisSoftmaxMatchesReferenceOnTheLastAxis) {
  for (const Shape& shape : {Shape{7}, Shape{3, 10}, Shape{2, 3, 4, 5}, Shape{2, 6, 1}}) {
    SCOPED_TRACE(shape_to_string(shape));
    GraphMaker g(13);
    ValueId in = g.input(shape);
    const std::int64_t axis = shape.back() == 1 ? -2 : -1;
    expect_matches_reference(g.finish(g.node("Softmax", {in}, shape, attrs({{"axis", axis}}))));
  }
}

TEST(XnnpackSoftmaxTest, ChannelSoftmaxOfA4dTensorRunsChannelsLast) {
  GraphMaker g(13);
  ValueId in = g.input({2, 5, 3, 4});
  expect_matches_reference(
      g.finish(g.node("Softmax", {in}, {2, 5, 3, 4}, attrs({{"axis", std::int64_t{1}}}))));
}

TEST(XnnpackSoftmaxTest, CoercedSoftmaxAfterConvNormalizesOverChannelsAndSpace) {
  GraphMaker g(11);
  ValueId in = g.input({2, 3, 4, 5});
  ValueId conv = g.node("Conv", {in, g.weights({6, 3, 1, 1})}, {2, 6, 4, 5});
  expect_matches_reference(
      g.finish(g.node("Softmax", {conv}, {2, 6, 4, 5}, attrs({{"axis", std::int64_t{1}}}))));
}

TEST(XnnpackSoftmaxTest, SingleAxisSoftmaxOverAnInnerAxisIsNotSupported) {
  GraphMaker g(13);
  ValueId in = g.input({2, 3, 4});
  Graph graph = g.finish(g.node("Softmax", {in}, {2, 3, 4}, attrs({{"axis", std::int64_t{1}}})));
  EXPECT_FALSE(xnnpack_backend().supports(graph, graph.node(0)));
}

TEST(XnnpackPadTest, ConstantPadMatchesReferenceInBothLayouts) {
  GraphMaker g;
  ValueId in = g.input({1, 2, 4, 5});
  ValueId y = g.node("Pad", {in, g.ints({0, 1, 2, 0, 1, 0, 1, 3}), g.scalar(0.5f)}, {2, 3, 7, 8});
  expect_matches_reference(g.finish(y));

  GraphMaker h;
  ValueId x = h.input({1, 3, 5, 5});
  ValueId conv = h.node("Conv", {x, h.weights({4, 3, 1, 1})}, {1, 4, 5, 5});
  ValueId padded = h.node("Pad", {conv, h.ints({0, 0, 1, 2, 0, 0, 2, 1})}, {1, 4, 8, 8});
  expect_matches_reference(
      h.finish(h.node("MaxPool", {padded}, {1, 4, 4, 4},
                      attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}))));
}

TEST(XnnpackPadTest, NegativeAndNonConstantPadsAreNotSupported) {
  GraphMaker g;
  ValueId in = g.input({4, 5});
  Graph graph = g.finish(g.node("Pad", {in, g.ints({0, -1, 0, 0})}, {4, 4}));
  EXPECT_FALSE(xnnpack_backend().supports(graph, graph.node(0)));
  GraphMaker h(13);
  ValueId x = h.input({4, 5});
  ValueId pads = h.graph().add_input("pads", TensorType{DType::kInt64, {4}});
  Graph computed = h.finish(h.node("Pad", {x, pads}, {5, 6}));
  EXPECT_FALSE(xnnpack_backend().supports(computed, computed.node(0)));
}

TEST(XnnpackReshapeTest, ReshapeFlattenSqueezeUnsqueezeMatchReference) {
  GraphMaker g;
  ValueId in = g.input({2, 3, 4});
  ValueId r = g.node("Reshape", {in, g.ints({6, 4})}, {6, 4});
  ValueId u = g.node("Unsqueeze", {r, g.ints({1})}, {6, 1, 4});
  ValueId s = g.node("Squeeze", {u, g.ints({1})}, {6, 4});
  ValueId f = g.node("Flatten", {s}, {1, 24}, attrs({{"axis", std::int64_t{0}}}));
  expect_matches_reference(g.finish(g.node("Relu", {f}, {1, 24})));
}

TEST(XnnpackResizeTest, BilinearResizeMatchesReferenceForEveryCoordinateMode) {
  struct Case {
    Shape x;
    Shape y;
  };
  const Case cases[] = {
      {{1, 3, 5, 7}, {1, 3, 10, 14}}, {{2, 2, 5, 7}, {2, 2, 8, 9}}, {{1, 2, 9, 8}, {1, 2, 4, 5}}};
  for (const char* mode : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message() << mode << " " << shape_to_string(c.y));
      GraphMaker g(13);
      ValueId x = g.input(c.x);
      ValueId y = g.node("Resize", {x, kNoValue, kNoValue, g.ints(c.y)}, c.y,
                         attrs({{"mode", std::string("linear")},
                                {"coordinate_transformation_mode", std::string(mode)}}));
      expect_matches_reference(g.finish(y));
    }
  }
}

TEST(XnnpackResizeTest, ScalesInputThatIsExactlyTheSizeRatioMatchesReference) {
  GraphMaker g(13);
  ValueId x = g.input({1, 4, 6, 5});
  ValueId scales = g.constant(Tensor::from_vector<float>({1.0f, 1.0f, 2.0f, 0.6f}, {4}));
  ValueId y = g.node("Resize", {x, g.constant(Tensor::from_vector<float>({}, {0})), scales},
                     {1, 4, 12, 3}, attrs({{"mode", std::string("linear")}}));
  expect_matches_reference(g.finish(y));
}

TEST(XnnpackResizeTest, ScalesThatRoundTheOutputSizeAndNearestModeAreNotSupported) {
  GraphMaker g(13);
  ValueId x = g.input({1, 4, 5, 5});
  ValueId scales = g.constant(Tensor::from_vector<float>({1.0f, 1.0f, 1.5f, 1.5f}, {4}));
  Graph rounded = g.finish(g.node("Resize", {x, kNoValue, scales}, {1, 4, 7, 7},
                                  attrs({{"mode", std::string("linear")}})));
  EXPECT_FALSE(xnnpack_backend().supports(rounded, rounded.node(0)));
  GraphMaker h(13);
  ValueId x2 = h.input({1, 4, 5, 5});
  Graph nearest =
      h.finish(h.node("Resize", {x2, kNoValue, kNoValue, h.ints({1, 4, 10, 10})}, {1, 4, 10, 10}));
  EXPECT_FALSE(xnnpack_backend().supports(nearest, nearest.node(0)));
}

// The native backend has no DepthToSpace; ONNX's DCR definition is checked directly:
// y[n, c, h * b + i, w * b + j] = x[n, (i * b + j) * C / b^2 + c, h, w].
TEST(XnnpackDepthToSpaceTest, DcrModeMovesChannelBlocksIntoSpace) {
  const std::int64_t n = 2, c = 8, h = 3, w = 4, b = 2, oc = c / (b * b);
  GraphMaker g;
  ValueId in = g.input({n, c, h, w});
  Graph graph =
      g.finish(g.node("DepthToSpace", {in}, {n, oc, h * b, w * b}, attrs({{"blocksize", b}})));
  auto kernel = xnnpack_backend().compile(graph, CompileOptions{1});
  ASSERT_TRUE(kernel.ok()) << kernel.error();
  std::vector<Tensor> inputs = random_inputs(graph, 3, -1.0f, 1.0f);
  std::vector<Tensor> outputs = allocate_outputs(graph);
  (*kernel)->run(inputs, outputs);
  const float* x = inputs[0].data<float>();
  const float* y = outputs[0].data<float>();
  for (std::int64_t in = 0; in < n; ++in) {
    for (std::int64_t ic = 0; ic < oc; ++ic) {
      for (std::int64_t oy = 0; oy < h * b; ++oy) {
        for (std::int64_t ox = 0; ox < w * b; ++ox) {
          const std::int64_t channel = ((oy % b) * b + ox % b) * oc + ic;
          const float expected = x[((in * c + channel) * h + oy / b) * w + ox / b];
          ASSERT_EQ(y[((in * oc + ic) * h * b + oy) * w * b + ox], expected);
        }
      }
    }
  }
}

TEST(XnnpackDepthToSpaceTest, CrdModeIsNotSupported) {
  GraphMaker g;
  ValueId in = g.input({1, 8, 3, 4});
  Graph graph =
      g.finish(g.node("DepthToSpace", {in}, {1, 2, 6, 8},
                      attrs({{"blocksize", std::int64_t{2}}, {"mode", std::string("CRD")}})));
  EXPECT_FALSE(xnnpack_backend().supports(graph, graph.node(0)));
}

}  // namespace
}  // namespace collage::testing
