// Gemm and MatMul against naive triple loops, with transposes, every form of
// Gemm's C, and numpy-style batched and 1-D MatMul.
#include <gtest/gtest.h>

#include <vector>

#include "backends/native/compute_op_harness.h"

namespace collage::native_test {
namespace {

struct GemmProblem {
  std::int64_t m, n, k;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 1.0f;
  Shape c_shape;  // empty: no C
  bool has_c = false;
};

std::vector<float> naive_gemm(const GemmProblem& p, const Tensor& a, const Tensor& b,
                              const Tensor* c) {
  std::vector<float> y;
  for (std::int64_t i = 0; i < p.m; ++i) {
    for (std::int64_t j = 0; j < p.n; ++j) {
      double sum = 0.0;
      for (std::int64_t q = 0; q < p.k; ++q) {
        const float av = p.trans_a ? a.data<float>()[q * p.m + i] : a.data<float>()[i * p.k + q];
        const float bv = p.trans_b ? b.data<float>()[j * p.k + q] : b.data<float>()[q * p.n + j];
        sum += static_cast<double>(av) * bv;
      }
      double value = p.alpha * sum;
      if (c != nullptr) {
        // Unidirectional broadcast of C to [m, n], aligned right.
        const Shape& cs = c->shape();
        const std::int64_t cm = cs.size() == 2 ? cs[0] : 1;
        const std::int64_t cn = cs.empty() ? 1 : cs.back();
        value += p.beta * c->data<float>()[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
      }
      y.push_back(static_cast<float>(value));
    }
  }
  return y;
}

void expect_gemm_matches_naive(const GemmProblem& p, int threads = 1) {
  SCOPED_TRACE(::testing::Message()
               << "m=" << p.m << " n=" << p.n << " k=" << p.k << " transA=" << p.trans_a
               << " transB=" << p.trans_b << " C=" << shape_to_string(p.c_shape));
  const Tensor a = random_tensor(p.trans_a ? Shape{p.k, p.m} : Shape{p.m, p.k}, 31);
  const Tensor b = random_tensor(p.trans_b ? Shape{p.n, p.k} : Shape{p.k, p.n}, 32);
  Attributes attributes;
  attributes.set("transA", std::int64_t{p.trans_a});
  attributes.set("transB", std::int64_t{p.trans_b});
  attributes.set("alpha", p.alpha);
  attributes.set("beta", p.beta);
  ComputeCase c{"Gemm", {a, b}, {f32_type({p.m, p.n})}, attributes};
  c.threads = threads;
  Tensor bias;
  if (p.has_c) {
    bias = random_tensor(p.c_shape, 33);
    c.inputs.push_back(bias);
  }
  expect_close(c.run_one(), naive_gemm(p, a, b, p.has_c ? &bias : nullptr), 1e-4f);
}

TEST(GemmTest, TransposesAndScalingMatchNaiveLoops) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      expect_gemm_matches_naive({13, 29, 17, ta, tb, 0.25f, 1.0f, {}, false});
      expect_gemm_matches_naive({40, 3, 70, ta, tb, 1.0f, 2.0f, {40, 3}, true});
    }
  }
}

TEST(GemmTest, EveryBroadcastFormOfCMatchesNaiveLoops) {
  const Shape forms[] = {{}, {1}, {9}, {1, 9}, {7, 1}, {7, 9}, {1, 1}};
  for (const Shape& form : forms) {
    expect_gemm_matches_naive({7, 9, 5, false, false, 1.5f, -0.5f, form, true});
  }
}

TEST(GemmTest, FullyConnectedLayerShapeRunsInParallel) {
  // A batch-1 linear layer: Gemm(x, W^T) + b, the GEMV path.
  expect_gemm_matches_naive({1, 300, 200, false, true, 1.0f, 1.0f, {300}, true}, 2);
  expect_gemm_matches_naive({33, 300, 200, false, true, 1.0f, 1.0f, {300}, true}, 2);
}

TEST(GemmTest, TransposedOperandsWithAlphaBetaAndVectorCAreExact) {
  Attributes attributes;
  attributes.set("transA", std::int64_t{1});
  attributes.set("transB", std::int64_t{1});
  attributes.set("alpha", 2.0f);
  attributes.set("beta", 3.0f);
  // A is [k=2, m=2], B is [n=2, k=2], C is [n].
  ComputeCase c{"Gemm",
                {f32_tensor({2, 2}, {1, 2, 3, 4}), f32_tensor({2, 2}, {1, 0, 1, 1}),
                 f32_tensor({2}, {10, 20})},
                {f32_type({2, 2})},
                attributes};
  // A^T = [1 3; 2 4], B^T = [1 1; 0 1]: A^T B^T = [1 4; 2 6].
  expect_close(c.run_one(), {2 * 1 + 30, 2 * 4 + 60, 2 * 2 + 30, 2 * 6 + 60}, 0.0f);
}

TEST(GemmTest, ZeroBetaIgnoresC) {
  Attributes attributes;
  attributes.set("beta", 0.0f);
  ComputeCase c{
      "Gemm",
      {f32_tensor({1, 2}, {1, 2}), f32_tensor({2, 1}, {3, 4}), f32_tensor({1, 1}, {std::nanf("")})},
      {f32_type({1, 1})},
      attributes};
  expect_close(c.run_one(), {11}, 0.0f);
}

// numpy matmul with broadcast batch dimensions, in double.
std::vector<float> naive_matmul(const Tensor& a, const Tensor& b, const Shape& out) {
  Shape sa = a.shape(), sb = b.shape();
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  const std::int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  const std::size_t batch_rank = std::max(sa.size(), sb.size()) - 2;
  Shape ba(batch_rank, 1), bb(batch_rank, 1), batch(batch_rank);
  std::copy(sa.begin(), sa.end() - 2, ba.end() - (sa.size() - 2));
  std::copy(sb.begin(), sb.end() - 2, bb.end() - (sb.size() - 2));
  for (std::size_t d = 0; d < batch_rank; ++d) batch[d] = std::max(ba[d], bb[d]);
  std::vector<float> y;
  for (std::int64_t index = 0; index < shape_numel(batch); ++index) {
    std::int64_t ia = 0, ib = 0;
    for (std::size_t d = 0, rest = index; d < batch_rank; ++d) {
      std::int64_t inner = 1;
      for (std::size_t e = d + 1; e < batch_rank; ++e) inner *= batch[e];
      const std::int64_t i = static_cast<std::int64_t>(rest) / inner;
      rest %= inner;
      ia = ia * ba[d] + (ba[d] == 1 ? 0 : i);
      ib = ib * bb[d] + (bb[d] == 1 ? 0 : i);
    }
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (std::int64_t q = 0; q < k; ++q) {
          sum += static_cast<double>(a.data<float>()[ia * m * k + i * k + q]) *
                 b.data<float>()[ib * k * n + q * n + j];
        }
        y.push_back(static_cast<float>(sum));
      }
    }
  }
  EXPECT_EQ(static_cast<std::int64_t>(y.size()), shape_numel(out));
  return y;
}

void expect_matmul_matches_naive(const Shape& sa, const Shape& sb, const Shape& out,
                                 int threads = 1) {
  SCOPED_TRACE(::testing::Message() << shape_to_string(sa) << " x " << shape_to_string(sb));
  const Tensor a = random_tensor(sa, 41);
  const Tensor b = random_tensor(sb, 42);
  ComputeCase c{"MatMul", {a, b}, {f32_type(out)}};
  c.threads = threads;
  expect_close(c.run_one(), naive_matmul(a, b, out), 1e-4f);
}

TEST(MatMulTest, PlainAndBatchedProductsMatchNaiveLoops) {
  expect_matmul_matches_naive({5, 7}, {7, 3}, {5, 3});
  expect_matmul_matches_naive({4, 5, 7}, {4, 7, 3}, {4, 5, 3});
  expect_matmul_matches_naive({2, 3, 6, 8}, {2, 3, 8, 5}, {2, 3, 6, 5}, 2);
}

TEST(MatMulTest, BatchDimensionsBroadcastLikeNumpy) {
  expect_matmul_matches_naive({3, 1, 5, 7}, {4, 7, 2}, {3, 4, 5, 2});
  expect_matmul_matches_naive({5, 7}, {2, 7, 3}, {2, 5, 3});
  expect_matmul_matches_naive({2, 1, 5, 7}, {1, 3, 7, 4}, {2, 3, 5, 4}, 2);
}

TEST(MatMulTest, SharedRightOperandFoldsTheBatchIntoOneGemm) {
  expect_matmul_matches_naive({2, 9, 20}, {20, 11}, {2, 9, 11});
  expect_matmul_matches_naive({3, 4, 20}, {1, 20, 11}, {3, 4, 11}, 2);
}

TEST(MatMulTest, OneDimensionalOperandsFollowNumpyRules) {
  expect_matmul_matches_naive({7}, {7, 3}, {3});
  expect_matmul_matches_naive({4, 7}, {7}, {4});
  expect_matmul_matches_naive({7}, {7}, {});
  expect_matmul_matches_naive({2, 4, 7}, {7}, {2, 4});
  expect_matmul_matches_naive({7}, {2, 7, 3}, {2, 3});
}

TEST(MatMulTest, SmallProductIsExact) {
  ComputeCase c{"MatMul",
                {f32_tensor({2, 3}, {1, 2, 3, 4, 5, 6}), f32_tensor({3, 2}, {7, 8, 9, 10, 11, 12})},
                {f32_type({2, 2})}};
  expect_close(c.run_one(), {58, 64, 139, 154}, 0.0f);
}

TEST(MatMulTest, MismatchedInnerDimensionsAreAnError) {
  ComputeCase c{"MatMul", {random_tensor({2, 3}, 1), random_tensor({4, 2}, 2)}, {f32_type({2, 2})}};
  EXPECT_THROW(c.run(), Error);
}

TEST(MatMulTest, CheckRejectsIntegerOperands) {
  ComputeCase c{"MatMul",
                {Tensor::zeros(TensorType{DType::kInt32, {2, 2}}),
                 Tensor::zeros(TensorType{DType::kInt32, {2, 2}})},
                {TensorType{DType::kInt32, {2, 2}}}};
  EXPECT_FALSE(c.supported());
}

}  // namespace
}  // namespace collage::native_test
