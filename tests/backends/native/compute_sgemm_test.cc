#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "collage/backends/native/sgemm.h"

namespace collage::native {
namespace {

std::vector<float> random_values(std::size_t count, std::uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> distribution(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = distribution(engine);
  return values;
}

struct GemmCase {
  std::int64_t m, n, k;
  bool trans_a, trans_b;
  int threads;
};

// C = alpha * op(A) op(B) + beta * C + row_bias + col_bias, in double.
std::vector<float> naive_gemm(const GemmCase& g, const std::vector<float>& a,
                              const std::vector<float>& b, const std::vector<float>& c, float alpha,
                              float beta, const std::vector<float>& row_bias,
                              const std::vector<float>& col_bias) {
  std::vector<float> result(static_cast<std::size_t>(g.m * g.n));
  for (std::int64_t i = 0; i < g.m; ++i) {
    for (std::int64_t j = 0; j < g.n; ++j) {
      double sum = 0.0;
      for (std::int64_t p = 0; p < g.k; ++p) {
        const float av = g.trans_a ? a[p * g.m + i] : a[i * g.k + p];
        const float bv = g.trans_b ? b[j * g.k + p] : b[p * g.n + j];
        sum += static_cast<double>(av) * bv;
      }
      double value = alpha * sum + row_bias[i] + col_bias[j];
      if (beta != 0.0f) value += beta * c[i * g.n + j];
      result[i * g.n + j] = static_cast<float>(value);
    }
  }
  return result;
}

void expect_gemm_matches_naive(const GemmCase& g, float alpha, float beta, bool biases) {
  const auto a = random_values(static_cast<std::size_t>(g.m * g.k), 1);
  const auto b = random_values(static_cast<std::size_t>(g.k * g.n), 2);
  auto c = random_values(static_cast<std::size_t>(g.m * g.n), 3);
  const auto row_bias = biases ? random_values(static_cast<std::size_t>(g.m), 4)
                               : std::vector<float>(static_cast<std::size_t>(g.m), 0.0f);
  const auto col_bias = biases ? random_values(static_cast<std::size_t>(g.n), 5)
                               : std::vector<float>(static_cast<std::size_t>(g.n), 0.0f);
  const auto expected = naive_gemm(g, a, b, c, alpha, beta, row_bias, col_bias);
  if (beta == 0.0f) std::fill(c.begin(), c.end(), std::nanf(""));
  SgemmOutput out{c.data(),
                  g.n,
                  alpha,
                  beta,
                  biases ? row_bias.data() : nullptr,
                  biases ? col_bias.data() : nullptr};
  sgemm(g.m, g.n, g.k, SgemmMatrix{a.data(), g.trans_a ? g.m : g.k, g.trans_a},
        SgemmMatrix{b.data(), g.trans_b ? g.k : g.n, g.trans_b}, out, g.threads);
  const double tolerance = 1e-5 * std::sqrt(static_cast<double>(g.k) + 1.0) + 1e-6;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    ASSERT_NEAR(c[i], expected[i], tolerance * std::max(1.0f, std::fabs(expected[i])))
        << "m=" << g.m << " n=" << g.n << " k=" << g.k << " ta=" << g.trans_a << " tb=" << g.trans_b
        << " threads=" << g.threads << " at " << i;
  }
}

TEST(SgemmTest, MatchesNaiveProductOverShapesAndTransposes) {
  const std::int64_t sizes[][3] = {{1, 1, 1},     {2, 3, 4},   {6, 16, 8},     {7, 17, 9},
                                   {13, 31, 257}, {50, 70, 3}, {97, 130, 300}, {5, 600, 40}};
  for (const auto& s : sizes) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        expect_gemm_matches_naive({s[0], s[1], s[2], ta, tb, 1}, 1.0f, 0.0f, false);
      }
    }
  }
}

// Up to 32 columns of B, a row-major A is read where it lies (rows past
// the last in a tile read the last row): tall, across k blocks, on two
// threads, with the store's scaling and biases, and at the 32/33 border.
TEST(SgemmTest, NarrowProductsReadingAUnpackedMatchNaiveProducts) {
  expect_gemm_matches_naive({1030, 32, 520, false, false, 2}, 1.0f, 0.0f, false);
  expect_gemm_matches_naive({61, 9, 300, false, true, 2}, 0.5f, 2.0f, true);
  expect_gemm_matches_naive({25, 33, 17, false, false, 2}, 1.0f, 1.0f, true);
  expect_gemm_matches_naive({5, 2, 7, false, false, 1}, -1.0f, 0.0f, true);
}

TEST(SgemmTest, AppliesAlphaBetaAndBothBiases) {
  expect_gemm_matches_naive({19, 45, 33, false, false, 1}, 0.5f, 2.0f, true);
  expect_gemm_matches_naive({19, 45, 300, true, true, 1}, -1.5f, 1.0f, true);
  expect_gemm_matches_naive({8, 20, 5, false, true, 1}, 1.0f, 0.0f, true);
}

TEST(SgemmTest, MatrixVectorProductsTakeTheGemvPath) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      expect_gemm_matches_naive({100, 1, 70, ta, tb, 1}, 0.5f, 2.0f, true);
      expect_gemm_matches_naive({1, 150, 70, ta, tb, 1}, 0.5f, 2.0f, true);
    }
  }
}

TEST(SgemmTest, ParallelResultMatchesNaive) {
  expect_gemm_matches_naive({130, 250, 520, false, false, 2}, 1.0f, 0.0f, true);
  expect_gemm_matches_naive({7, 700, 64, true, false, 4}, 1.0f, 1.0f, false);
  expect_gemm_matches_naive({1, 5000, 16, false, false, 2}, 1.0f, 0.0f, false);
}

TEST(SgemmTest, LargeNAndMSpanSeveralPackedBlocks) {
  // n beyond one packed block of B and m beyond one packed chunk of A.
  expect_gemm_matches_naive({3, 4200, 20, false, false, 1}, 1.0f, 0.0f, true);
  expect_gemm_matches_naive({4100, 3, 20, true, false, 2}, 1.0f, 0.0f, true);
}

TEST(SgemmTest, EmptyInnerDimensionLeavesOnlyScaledCAndBias) {
  std::vector<float> c = {1.0f, 2.0f, 3.0f, 4.0f};
  const std::vector<float> row_bias = {10.0f, 20.0f};
  sgemm(2, 2, 0, SgemmMatrix{nullptr, 0}, SgemmMatrix{nullptr, 2},
        SgemmOutput{c.data(), 2, 1.0f, 3.0f, row_bias.data(), nullptr}, 1);
  EXPECT_EQ(c, (std::vector<float>{13.0f, 16.0f, 29.0f, 32.0f}));
}

TEST(SgemmTest, SmallProductIsExact) {
  // [1 2; 3 4] * [5 6; 7 8] = [19 22; 43 50]
  const std::vector<float> a = {1, 2, 3, 4};
  const std::vector<float> b = {5, 6, 7, 8};
  std::vector<float> c(4);
  sgemm(2, 2, 2, SgemmMatrix{a.data(), 2}, SgemmMatrix{b.data(), 2}, SgemmOutput{c.data(), 2}, 1);
  EXPECT_EQ(c, (std::vector<float>{19, 22, 43, 50}));
}

// op(B)[p][j] = p * 100 + j, produced panel by panel.
class CountingSource final : public SgemmPanelSource {
 public:
  void pack_panel(std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nr,
                  float* panel) const override {
    for (std::int64_t p = 0; p < kc; ++p) {
      for (std::int64_t j = 0; j < kSgemmNr; ++j) {
        panel[p * kSgemmNr + j] = j < nr ? static_cast<float>((k0 + p) * 100 + j0 + j) : 0.0f;
      }
    }
  }
};

TEST(SgemmTest, PanelSourceSuppliesTheRightOperand) {
  const std::int64_t m = 3, n = 37, k = 5;
  const std::vector<float> a = {1, 0, 0, 0, 0,   // row 0 picks B row 0
                                0, 0, 0, 0, 1,   // row 1 picks B row 4
                                1, 1, 0, 0, 0};  // row 2 sums B rows 0 and 1
  std::vector<float> c(static_cast<std::size_t>(m * n));
  sgemm(m, n, k, SgemmMatrix{a.data(), k}, CountingSource(), SgemmOutput{c.data(), n}, 1);
  for (std::int64_t j = 0; j < n; ++j) {
    EXPECT_EQ(c[j], static_cast<float>(j));
    EXPECT_EQ(c[n + j], static_cast<float>(400 + j));
    EXPECT_EQ(c[2 * n + j], static_cast<float>(100 + 2 * j));
  }
}

}  // namespace
}  // namespace collage::native
