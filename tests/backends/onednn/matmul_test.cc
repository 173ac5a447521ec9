#include <gtest/gtest.h>

#include "backends/onednn/onednn_test_util.h"

namespace collage::onednn_test {
namespace {

struct MatMulCase {
  std::string name;
  Shape a;
  Shape b;
  Shape out;
  bool constant_b = true;
};

class MatMulTest : public ::testing::TestWithParam<MatMulCase> {};

TEST_P(MatMulTest, MatchesTheReference) {
  const MatMulCase& c = GetParam();
  GraphBuilder b;
  ValueId rhs = c.constant_b ? b.weights(c.b) : b.input(c.b);
  b.output(b.node("MatMul", {b.input(c.a), rhs}, c.out));
  EXPECT_TRUE(onednn_backend().supports(b.graph(), b.graph().node(0)));
  EXPECT_TRUE(matches_reference(b.graph()));
}

INSTANTIATE_TEST_SUITE_P(
    Grid, MatMulTest,
    ::testing::Values(
        MatMulCase{"Matrix", {7, 13}, {13, 5}, {7, 5}},
        MatMulCase{"RuntimeWeights", {7, 13}, {13, 5}, {7, 5}, false},
        MatMulCase{"VectorTimesMatrix", {13}, {13, 5}, {5}},
        MatMulCase{"MatrixTimesVector", {7, 13}, {13}, {7}},
        MatMulCase{"VectorTimesVector", {13}, {13}, {}, false},
        MatMulCase{"BatchedWithSharedWeights", {3, 7, 13}, {13, 5}, {3, 7, 5}},
        MatMulCase{"Batched", {3, 7, 13}, {3, 13, 5}, {3, 7, 5}, false},
        MatMulCase{"BatchBroadcastOfWeights", {2, 3, 7, 13}, {1, 3, 13, 5}, {2, 3, 7, 5}},
        MatMulCase{"BatchBroadcastOfBoth", {2, 1, 7, 13}, {1, 4, 13, 5}, {2, 4, 7, 5}, false},
        MatMulCase{"BatchedVector", {13}, {2, 3, 13, 5}, {2, 3, 5}, false},
        MatMulCase{"AttentionScores", {2, 4, 9, 16}, {2, 4, 16, 9}, {2, 4, 9, 9}, false}),
    [](const ::testing::TestParamInfo<MatMulCase>& info) { return info.param.name; });

struct GemmCase {
  std::string name;
  bool trans_a = false;
  bool trans_b = false;
  float alpha = 1.f;
  float beta = 1.f;
  Shape c;  // empty: no C
  bool constant_b = true;
  bool constant_c = true;
};

class GemmTest : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GemmTest, MatchesTheReference) {
  const GemmCase& g = GetParam();
  const std::int64_t m = 6, k = 11, n = 9;
  GraphBuilder b;
  ValueId a = b.input(g.trans_a ? Shape{k, m} : Shape{m, k});
  const Shape b_shape = g.trans_b ? Shape{n, k} : Shape{k, n};
  std::vector<ValueId> inputs = {a, g.constant_b ? b.weights(b_shape) : b.input(b_shape)};
  if (g.c != Shape{0}) inputs.push_back(g.constant_c ? b.weights(g.c) : b.input(g.c));
  b.output(b.node("Gemm", inputs, {m, n},
                  attrs({{"transA", std::int64_t{g.trans_a}},
                         {"transB", std::int64_t{g.trans_b}},
                         {"alpha", g.alpha},
                         {"beta", g.beta}})));
  EXPECT_TRUE(onednn_backend().supports(b.graph(), b.graph().node(0)));
  EXPECT_TRUE(matches_reference(b.graph()));
}

INSTANTIATE_TEST_SUITE_P(
    Grid, GemmTest,
    ::testing::Values(
        GemmCase{"RowBias", false, false, 1.f, 1.f, {9}},
        GemmCase{"TransposedB", false, true, 1.f, 1.f, {1, 9}},
        GemmCase{"TransposedA", true, false, 1.f, 1.f, {6, 9}},
        GemmCase{"BothTransposedScaled", true, true, 0.5f, 2.f, {9}},
        GemmCase{"ColumnC", false, true, 1.f, 1.f, {6, 1}},
        GemmCase{"ScalarC", false, false, 1.f, -1.f, {}},
        GemmCase{"NoC", false, true, 1.5f, 1.f, {0}},
        GemmCase{"RuntimeOperandsScaled", true, true, 0.25f, 1.f, {6, 9}, false, false},
        GemmCase{"RuntimeBWithRowBiasScaled", false, false, 3.f, 0.5f, {9}, false, true}),
    [](const ::testing::TestParamInfo<GemmCase>& info) { return info.param.name; });

// The dims of the source of each matmul the lowered program of `graph` runs.
std::vector<dnnl::memory::dims> matmul_source_dims(const Graph& graph) {
  std::vector<dnnl::memory::dims> dims;
  for (const onednn::Step& step : lowered_steps(graph)) {
    if (step.primitive.get_kind() != dnnl::primitive::kind::matmul) continue;
    dims.push_back(step.args.at(DNNL_ARG_SRC).get_desc().dims());
  }
  return dims;
}

TEST(MatMulBatchTest, ALinearOverAnImageIsOneTallProductWithItsBiasAndResidualFused) {
  GraphBuilder b;
  ValueId x = b.input({1, 4, 5, 16});
  ValueId mm = b.node("MatMul", {x, b.weights({16, 24})}, {1, 4, 5, 24});
  ValueId biased = b.node("Add", {mm, b.weights({24})}, {1, 4, 5, 24});
  ValueId residual = b.node("Add", {biased, b.input({1, 4, 5, 24})}, {1, 4, 5, 24});
  b.output(b.node("Relu", {residual}, {1, 4, 5, 24}));
  EXPECT_EQ(matmul_source_dims(b.graph()), (std::vector<dnnl::memory::dims>{{20, 16}}));
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(MatMulBatchTest, WeightsWithUnitBatchDimsAreSharedByEveryRow) {
  GraphBuilder b;
  ValueId mm = b.node("MatMul", {b.input({2, 3, 16}), b.weights({1, 16, 8})}, {2, 3, 8});
  b.output(b.node("Mul", {mm, b.weights({2, 3, 1})}, {2, 3, 8}));
  EXPECT_EQ(matmul_source_dims(b.graph()), (std::vector<dnnl::memory::dims>{{6, 16}}));
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(MatMulBatchTest, AnOperandThatTellsTheBatchesApartKeepsTheBatch) {
  GraphBuilder b;
  ValueId mm = b.node("MatMul", {b.input({2, 3, 16}), b.weights({16, 8})}, {2, 3, 8});
  // Broadcast over the batch but not over the rows within one matrix.
  b.output(b.node("Add", {mm, b.input({3, 8})}, {2, 3, 8}));
  EXPECT_EQ(matmul_source_dims(b.graph()), (std::vector<dnnl::memory::dims>{{2, 3, 16}}));
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(MatMulBatchTest, WeightsThatDifferPerBatchKeepTheBatch) {
  GraphBuilder b;
  b.output(b.node("MatMul", {b.input({2, 3, 16}), b.weights({2, 16, 8})}, {2, 3, 8}));
  EXPECT_EQ(matmul_source_dims(b.graph()), (std::vector<dnnl::memory::dims>{{2, 3, 16}}));
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(MatMulSupportTest, RejectsBatchDimsThatDoNotBroadcast) {
  GraphBuilder b;
  b.output(b.node("MatMul", {b.input({2, 4, 3}), b.input({3, 3, 5})}, {3, 4, 5}));
  EXPECT_FALSE(onednn_backend().supports(b.graph(), b.graph().node(0)));
}

TEST(MatMulSupportTest, RejectsGemmWithScaledRuntimeC) {
  GraphBuilder b;
  b.output(b.node("Gemm", {b.input({2, 3}), b.weights({3, 4}), b.input({2, 4})}, {2, 4},
                  attrs({{"beta", 0.5f}})));
  EXPECT_FALSE(onednn_backend().supports(b.graph(), b.graph().node(0)));
}

}  // namespace
}  // namespace collage::onednn_test
