#include <gtest/gtest.h>

#include <cmath>

#include "backends/onednn/onednn_test_util.h"
#include "collage/runtime/trace.h"

namespace collage::onednn_test {
namespace {

using Kind = dnnl::primitive::kind;

// How many steps of each kind the lowered program runs per call.
struct StepCounts {
  int reorders = 0;
  int compute = 0;
};

StepCounts count_steps(const Graph& graph) {
  StepCounts counts;
  for (const onednn::Step& step : lowered_steps(graph)) {
    (step.primitive.get_kind() == Kind::reorder ? counts.reorders : counts.compute) += 1;
  }
  return counts;
}

// x * 0.5 * (1 + erf(x / sqrt(2))) in one of the three node orders exporters use.
ValueId gelu(GraphBuilder& b, ValueId x, const Shape& shape, int form) {
  ValueId scaled = form == 1
                       ? b.node("Mul", {x, b.constant(scalar(float(1 / std::sqrt(2.0))))}, shape)
                       : b.node("Div", {x, b.constant(scalar(float(std::sqrt(2.0))))}, shape);
  ValueId erf = b.node("Erf", {scaled}, shape);
  ValueId plus_one = b.node("Add", {b.constant(scalar(1.f)), erf}, shape);
  if (form == 0) {
    ValueId product = b.node("Mul", {x, plus_one}, shape);
    return b.node("Mul", {product, b.constant(scalar(0.5f))}, shape);
  }
  if (form == 1) {
    ValueId half = b.node("Mul", {plus_one, b.constant(scalar(0.5f))}, shape);
    return b.node("Mul", {x, half}, shape);
  }
  ValueId half_x = b.node("Mul", {x, b.constant(scalar(0.5f))}, shape);
  return b.node("Mul", {half_x, plus_one}, shape);
}

TEST(FusionTest, ConvWithBiasAddAndReluIsOnePrimitive) {
  GraphBuilder b;
  ValueId conv = b.node("Conv", {b.input({1, 8, 6, 6}), b.weights({16, 8, 3, 3})}, {1, 16, 4, 4});
  ValueId biased = b.node("Add", {conv, b.weights({1, 16, 1, 1})}, {1, 16, 4, 4});
  b.output(b.node("Relu", {biased}, {1, 16, 4, 4}));
  EXPECT_EQ(count_steps(b.graph()).compute, 1);
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(FusionTest, ConvResidualAddAndReluUseTheSumPostOp) {
  GraphBuilder b;
  ValueId x = b.input({2, 8, 5, 5});
  ValueId conv = b.node("Conv", {x, b.weights({8, 8, 3, 3}), b.weights({8})}, {2, 8, 5, 5},
                        attrs({{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}}));
  ValueId sum = b.node("Add", {x, conv}, {2, 8, 5, 5});
  b.output(b.node("Relu", {sum}, {2, 8, 5, 5}));
  EXPECT_EQ(count_steps(b.graph()).compute, 1);
  EXPECT_TRUE(matches_reference(b.graph()));
}

// Copies the program makes of a value into a buffer of the same layout: a
// sum post-op's accumulator filled before the primitive accumulates into it.
int same_layout_copies(const Graph& graph) {
  int copies = 0;
  for (const onednn::Step& step : lowered_steps(graph)) {
    if (step.primitive.get_kind() != Kind::reorder) continue;
    if (step.args.at(DNNL_ARG_FROM).get_desc() == step.args.at(DNNL_ARG_TO).get_desc()) ++copies;
  }
  return copies;
}

// x -> Conv+Relu = s -> Conv+Relu -> Conv 1x1, + s, Relu -> Conv 1x1: a
// residual block inside a partition. With `read_after`, s is read again
// after the sum (added to the last Conv's result).
Graph residual_block(bool read_after) {
  GraphBuilder b;
  const Shape shape = {1, 16, 6, 6};
  auto pads = attrs({{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}});
  ValueId s = b.node(
      "Relu", {b.node("Conv", {b.input(shape), b.weights({16, 16, 3, 3})}, shape, pads)}, shape);
  ValueId t = b.node("Relu", {b.node("Conv", {s, b.weights({16, 16, 3, 3})}, shape, pads)}, shape);
  ValueId project = b.node("Conv", {t, b.weights({16, 16, 1, 1})}, shape);
  ValueId sum = b.node("Relu", {b.node("Add", {project, s}, shape)}, shape);
  ValueId last = b.node("Conv", {sum, b.weights({16, 16, 1, 1})}, shape);
  b.output(read_after ? b.node("Add", {last, s}, shape) : last);
  return b.graph();
}

TEST(FusionTest, ASumWhoseOperandNothingReadsAfterAccumulatesInItsBuffer) {
  const Graph graph = residual_block(false);
  EXPECT_EQ(same_layout_copies(graph), 0);
  EXPECT_TRUE(matches_reference(graph));
}

TEST(FusionTest, ASumWhoseOperandIsReadLaterAccumulatesInACopy) {
  const Graph graph = residual_block(true);
  EXPECT_GE(same_layout_copies(graph), 1);
  EXPECT_TRUE(matches_reference(graph));
}

TEST(FusionTest, AConvAddedToItsOwnInputDoesNotOverwriteIt) {
  // s = Relu(Conv(x)); Relu(Conv3x3(s) + s) -> Conv 1x1: the Conv reads s
  // around each output, so its sum cannot accumulate into s's buffer.
  GraphBuilder b;
  const Shape shape = {1, 16, 6, 6};
  auto pads = attrs({{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}});
  ValueId s = b.node(
      "Relu", {b.node("Conv", {b.input(shape), b.weights({16, 16, 3, 3})}, shape, pads)}, shape);
  ValueId conv = b.node("Conv", {s, b.weights({16, 16, 3, 3})}, shape, pads);
  ValueId sum = b.node("Relu", {b.node("Add", {conv, s}, shape)}, shape);
  b.output(b.node("Conv", {sum, b.weights({16, 16, 1, 1})}, shape));
  EXPECT_GE(same_layout_copies(b.graph()), 1);
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(FusionTest, AResidualAddAfterReluKeepsAtLeastTheReluFused) {
  GraphBuilder b;
  ValueId x = b.input({1, 8, 5, 5});
  ValueId conv = b.node("Conv", {x, b.weights({8, 8, 1, 1}), b.weights({8})}, {1, 8, 5, 5});
  ValueId relu = b.node("Relu", {conv}, {1, 8, 5, 5});
  b.output(b.node("Add", {relu, x}, {1, 8, 5, 5}));
  // Whether the add joins too depends on the ISA's kernels; the relu always does.
  EXPECT_LE(count_steps(b.graph()).compute, 2);
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(FusionTest, SubtractingAConvFromAValueIsFused) {
  GraphBuilder b;
  ValueId other = b.input({1, 8, 4, 4});
  ValueId conv = b.node("Conv", {b.input({1, 8, 4, 4}), b.weights({8, 8, 1, 1})}, {1, 8, 4, 4});
  b.output(b.node("Sub", {other, conv}, {1, 8, 4, 4}));
  EXPECT_EQ(count_steps(b.graph()).compute, 1);
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(FusionTest, PerChannelScaleAndClipAfterConvAreBinaryAndEltwisePostOps) {
  GraphBuilder b;
  ValueId conv = b.node("Conv", {b.input({1, 8, 6, 6}), b.weights({8, 1, 3, 3}), b.weights({8})},
                        {1, 8, 4, 4}, attrs({{"group", std::int64_t{8}}}));
  ValueId scaled = b.node("Mul", {conv, b.weights({8, 1, 1})}, {1, 8, 4, 4});
  b.output(
      b.node("Clip", {scaled, b.constant(scalar(0.f)), b.constant(scalar(0.5f))}, {1, 8, 4, 4}));
  EXPECT_EQ(count_steps(b.graph()).compute, 1);
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(FusionTest, TwoStepsOfOneEltwiseAlgorithmAreNotFusedTogether) {
  // Clip(-1, 2) then HardSigmoid (a linear step, then Clip(0, 1)): this
  // oneDNN's kernels would clip twice to [-1, 2]. Each clip runs with its
  // own bounds; the result matches the reference.
  GraphBuilder b;
  ValueId conv = b.node("Conv", {b.input({1, 8, 6, 6}), b.weights({8, 8, 3, 3}), b.weights({8})},
                        {1, 8, 4, 4});
  ValueId clipped =
      b.node("Clip", {conv, b.constant(scalar(-1.f)), b.constant(scalar(2.f))}, {1, 8, 4, 4});
  b.output(b.node("HardSigmoid", {clipped}, {1, 8, 4, 4}, attrs({{"alpha", 0.4f}})));
  // The Conv with its Clip, then the hard sigmoid's linear step and clip.
  EXPECT_EQ(count_steps(b.graph()).compute, 3);
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(FusionTest, ConvTransposeTakesNoPostOps) {
  // Its bias input is part of the deconvolution; what follows it runs as
  // primitives of its own (oneDNN's deconvolutions with post-ops are slow).
  GraphBuilder b;
  ValueId deconv =
      b.node("ConvTranspose", {b.input({1, 4, 5, 5}), b.weights({4, 6, 2, 2}), b.weights({6})},
             {1, 6, 10, 10}, attrs({{"strides", std::vector<std::int64_t>{2, 2}}}));
  ValueId biased = b.node("Add", {deconv, b.weights({6, 1, 1})}, {1, 6, 10, 10});
  b.output(b.node("Sigmoid", {biased}, {1, 6, 10, 10}));
  EXPECT_EQ(count_steps(b.graph()).compute, 3);
  EXPECT_TRUE(matches_reference(b.graph()));
}

class MatMulGeluTest : public ::testing::TestWithParam<int> {};

TEST_P(MatMulGeluTest, MatMulBiasAndErfGeluAreOnePrimitive) {
  GraphBuilder b;
  ValueId mm = b.node("MatMul", {b.input({2, 5, 16}), b.weights({16, 24})}, {2, 5, 24});
  ValueId biased = b.node("Add", {mm, b.weights({24})}, {2, 5, 24});
  b.output(gelu(b, biased, {2, 5, 24}, GetParam()));
  EXPECT_EQ(count_steps(b.graph()).compute, 1);
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST_P(MatMulGeluTest, StandaloneErfGeluIsOneEltwise) {
  GraphBuilder b;
  b.output(gelu(b, b.input({3, 10}), {3, 10}, GetParam()));
  EXPECT_EQ(count_steps(b.graph()).compute, 1);
  EXPECT_TRUE(matches_reference(b.graph(), 1, -4.f, 4.f));
}

INSTANTIATE_TEST_SUITE_P(ExporterForms, MatMulGeluTest, ::testing::Values(0, 1, 2));

struct FusedActivationCase {
  std::string name;
  std::string op;
  Attributes attributes;
};

class FusedActivationTest : public ::testing::TestWithParam<FusedActivationCase> {};

TEST_P(FusedActivationTest, AfterConvWithBiasIsOnePrimitive) {
  const FusedActivationCase& c = GetParam();
  GraphBuilder b;
  ValueId conv =
      b.node("Conv", {b.input({1, 8, 6, 6}), b.weights({16, 8, 3, 3}, -2.f, 2.f)}, {1, 16, 4, 4});
  ValueId biased = b.node("Add", {conv, b.weights({1, 16, 1, 1})}, {1, 16, 4, 4});
  b.output(b.node(c.op, {biased}, {1, 16, 4, 4}, c.attributes));
  EXPECT_EQ(count_steps(b.graph()).compute, 1);
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST_P(FusedActivationTest, AfterMatMulWithBiasIsOnePrimitive) {
  const FusedActivationCase& c = GetParam();
  GraphBuilder b;
  ValueId mm = b.node("MatMul", {b.input({2, 5, 16}), b.weights({16, 24}, -2.f, 2.f)}, {2, 5, 24});
  ValueId biased = b.node("Add", {mm, b.weights({24})}, {2, 5, 24});
  b.output(b.node(c.op, {biased}, {2, 5, 24}, c.attributes));
  EXPECT_EQ(count_steps(b.graph()).compute, 1);
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST_P(FusedActivationTest, AfterAPlainMatMulIsOnePrimitive) {
  const FusedActivationCase& c = GetParam();
  GraphBuilder b;
  ValueId mm = b.node("MatMul", {b.input({6, 32}), b.weights({32, 8}, -2.f, 2.f)}, {6, 8});
  b.output(b.node(c.op, {mm}, {6, 8}, c.attributes));
  EXPECT_EQ(count_steps(b.graph()).compute, 1);
  EXPECT_TRUE(matches_reference(b.graph()));
}

INSTANTIATE_TEST_SUITE_P(
    Activations, FusedActivationTest,
    ::testing::Values(FusedActivationCase{"Gelu", "Gelu", {}},
                      FusedActivationCase{"GeluTanh", "Gelu",
                                          attrs({{"approximate", std::string("tanh")}})},
                      FusedActivationCase{"Swish", "Swish", {}},
                      FusedActivationCase{"SwishAlpha", "Swish", attrs({{"alpha", 1.702f}})},
                      FusedActivationCase{"HardSwish", "HardSwish", {}}),
    [](const ::testing::TestParamInfo<FusedActivationCase>& info) { return info.param.name; });

TEST(FusionTest, MatMulResidualAddIsFused) {
  GraphBuilder b;
  ValueId x = b.input({6, 32});
  ValueId mm = b.node("MatMul", {x, b.weights({32, 32})}, {6, 32});
  b.output(b.node("Add", {mm, x}, {6, 32}));
  EXPECT_EQ(count_steps(b.graph()).compute, 1);
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(FusionTest, GemmWithReluIsOnePrimitive) {
  GraphBuilder b;
  ValueId gemm = b.node("Gemm", {b.input({4, 12}), b.weights({10, 12}), b.weights({10})}, {4, 10},
                        attrs({{"transB", std::int64_t{1}}}));
  b.output(b.node("Relu", {gemm}, {4, 10}));
  EXPECT_EQ(count_steps(b.graph()).compute, 1);
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(FusionTest, AddWithReluIsOneBinaryPrimitive) {
  GraphBuilder b;
  ValueId sum = b.node("Add", {b.input({2, 3, 4}), b.input({3, 4})}, {2, 3, 4});
  b.output(b.node("Relu", {sum}, {2, 3, 4}));
  EXPECT_EQ(count_steps(b.graph()).compute, 1);
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(FusionTest, BinaryChainWithBroadcastOperandsIsOnePrimitive) {
  GraphBuilder b;
  ValueId product = b.node("Mul", {b.input({2, 6, 3, 3}), b.input({2, 6, 3, 3})}, {2, 6, 3, 3});
  ValueId shifted = b.node("Add", {product, b.weights({6, 1, 1})}, {2, 6, 3, 3});
  b.output(b.node("Max", {shifted, b.constant(scalar(0.1f))}, {2, 6, 3, 3}));
  EXPECT_EQ(count_steps(b.graph()).compute, 1);
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(FusionTest, BatchNormWithReluIsOnePrimitive) {
  GraphBuilder b;
  const Shape c = {8};
  ValueId bn = b.node(
      "BatchNormalization",
      {b.input({2, 8, 4, 4}), b.weights(c), b.weights(c), b.weights(c), b.weights(c, 0.5f, 1.5f)},
      {2, 8, 4, 4});
  b.output(b.node("Relu", {bn}, {2, 8, 4, 4}));
  EXPECT_EQ(count_steps(b.graph()).compute, 1);
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(FusionTest, AValueThatIsAlsoAnOutputIsNotFusedAway) {
  GraphBuilder b;
  ValueId conv = b.node("Conv", {b.input({1, 4, 5, 5}), b.weights({8, 4, 3, 3})}, {1, 8, 3, 3});
  b.output(conv);
  b.output(b.node("Relu", {conv}, {1, 8, 3, 3}));
  EXPECT_EQ(count_steps(b.graph()).compute, 2);
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(FusionTest, TheLaterOfTwoBranchesAccumulatesTheEarlierOne) {
  GraphBuilder b;
  ValueId x = b.input({1, 8, 6, 6});
  const Attributes same = attrs({{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}});
  ValueId left = b.node("Conv", {x, b.weights({8, 8, 3, 3})}, {1, 8, 6, 6}, same);
  ValueId right = b.node("Conv", {x, b.weights({8, 8, 1, 1})}, {1, 8, 6, 6});
  ValueId sum = b.node("Add", {left, right}, {1, 8, 6, 6});
  b.output(b.node("Relu", {sum}, {1, 8, 6, 6}));
  EXPECT_EQ(count_steps(b.graph()).compute, 2);
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(LayoutTest, AConvChainReordersOnlyAtThePartitionEdges) {
  GraphBuilder b;
  const Attributes same = attrs({{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}});
  ValueId c1 =
      b.node("Conv", {b.input({1, 16, 12, 12}), b.weights({16, 16, 3, 3}), b.weights({16})},
             {1, 16, 12, 12}, same);
  ValueId r1 = b.node("Relu", {c1}, {1, 16, 12, 12});
  ValueId c2 = b.node("Conv", {r1, b.weights({32, 16, 3, 3})}, {1, 32, 12, 12}, same);
  ValueId s2 = b.node("Sigmoid", {c2}, {1, 32, 12, 12});
  ValueId pool = b.node("MaxPool", {s2}, {1, 32, 6, 6},
                        attrs({{"kernel_shape", std::vector<std::int64_t>{2, 2}},
                               {"strides", std::vector<std::int64_t>{2, 2}}}));
  ValueId bn =
      b.node("BatchNormalization",
             {pool, b.weights({32}), b.weights({32}), b.weights({32}), b.weights({32}, 0.5f, 1.5f)},
             {1, 32, 6, 6});
  ValueId dw =
      b.node("Conv", {bn, b.weights({32, 1, 3, 3})}, {1, 32, 6, 6},
             attrs({{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}, {"group", std::int64_t{32}}}));
  b.output(b.node("GlobalAveragePool", {dw}, {1, 32, 1, 1}));
  const StepCounts counts = count_steps(b.graph());
  EXPECT_EQ(counts.compute, 6);
  // At most one conversion into oneDNN's layout and one out of it.
  EXPECT_LE(counts.reorders, 2);
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(LayoutTest, ASoftmaxAfterAConvReadsAPlainCopy) {
  GraphBuilder b;
  ValueId conv = b.node("Conv", {b.input({2, 16, 4, 4}), b.weights({16, 16, 1, 1})}, {2, 16, 4, 4});
  b.output(b.node("Softmax", {conv}, {2, 16, 4, 4}, attrs({{"axis", std::int64_t{1}}})));
  EXPECT_TRUE(matches_reference(b.graph(), 1, -2.f, 2.f));
}

TEST(LayoutTest, AMatMulChainWithReshapedOperandsMatchesTheReference) {
  GraphBuilder b;
  ValueId mm = b.node("MatMul", {b.input({16}), b.weights({16, 8})}, {8});
  ValueId biased = b.node("Add", {mm, b.weights({8})}, {8});
  ValueId act = b.node("Tanh", {biased}, {8});
  b.output(b.node("MatMul", {b.input({3, 8}), act}, {3}));
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(LayoutTest, TransformerBlockMatchesTheReference) {
  GraphBuilder b;
  const Shape h = {2, 6, 16};
  ValueId x = b.input(h);
  ValueId ln = b.node("LayerNormalization", {x, b.weights({16}), b.weights({16})}, h);
  ValueId q = b.node("MatMul", {ln, b.weights({16, 16})}, h);
  ValueId k = b.node("MatMul", {ln, b.weights({16, 16})}, h);
  ValueId kt = b.input({2, 16, 6});
  ValueId logits = b.node("MatMul", {q, kt}, {2, 6, 6});
  ValueId probs = b.node("Softmax", {logits}, {2, 6, 6}, attrs({{"axis", std::int64_t{-1}}}));
  ValueId context = b.node("MatMul", {probs, k}, h);
  ValueId proj = b.node("MatMul", {context, b.weights({16, 16})}, h);
  ValueId residual = b.node("Add", {proj, x}, h);
  ValueId up = b.node("MatMul", {residual, b.weights({16, 32})}, {2, 6, 32});
  ValueId act = gelu(b, b.node("Add", {up, b.weights({32})}, {2, 6, 32}), {2, 6, 32}, 0);
  ValueId down = b.node("MatMul", {act, b.weights({32, 16})}, h);
  b.output(b.node("Add", {down, residual}, h));
  EXPECT_TRUE(matches_reference(b.graph()));
}

}  // namespace
}  // namespace collage::onednn_test

namespace collage::onednn_test {
namespace {

// The trace names each primitive by the ops it computes and the node it was
// lowered from, so that a region's time splits by op (bench/op_gaps.py).
TEST(FusionTest, EachPrimitiveIsTracedWithItsOpsAndItsNode) {
  GraphBuilder b;
  ValueId conv = b.node("Conv", {b.input({1, 8, 6, 6}), b.weights({16, 8, 3, 3})}, {1, 16, 4, 4});
  ValueId relu = b.node("Relu", {conv}, {1, 16, 4, 4});
  b.output(b.node("MaxPool", {relu}, {1, 16, 2, 2},
                  attrs({{"kernel_shape", std::vector<std::int64_t>{2, 2}},
                         {"strides", std::vector<std::int64_t>{2, 2}}})));
  const Graph& graph = b.graph();
  std::vector<std::string> labels;
  for (const onednn::Step& step : lowered_steps(graph)) {
    if (!step.is_reorder) labels.push_back(step.label + " @" + step.node);
  }
  EXPECT_EQ(labels, (std::vector<std::string>{"Conv+Relu @" + graph.node(0).name,
                                              "MaxPool @" + graph.node(2).name}));

  Result<std::unique_ptr<Kernel>> kernel = onednn_backend().compile(graph, CompileOptions{1});
  ASSERT_TRUE(kernel.ok());
  TraceRecorder recorder;
  {
    TraceRecorder::Install install(&recorder);
    run(*kernel.value(), graph, {Tensor::zeros(graph.type(graph.inputs()[0]))});
  }
  std::vector<std::string> spans;
  for (const TraceSpan& span : recorder.spans()) {
    if (span.kind == SpanKind::kOp) spans.push_back(span.name + " @" + span.args.at(0).second);
  }
  EXPECT_EQ(spans, labels);
}

}  // namespace
}  // namespace collage::onednn_test
