// The sixteen-lane (AVX-512) forms of the native kernels' vector math give
// what the eight-lane forms give, lane by lane, and both stay within a few
// ulps of double precision. The sixteen-lane test skips on a processor
// without AVX-512.
#include "collage/backends/native/vector_math.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

namespace collage::native {
namespace {

// Inputs across every range the functions treat apart: the polynomial's
// interval, tanh's series below 1/16, saturation, overflow and underflow
// of e^x, signed zeros and infinities. A multiple of 16 long.
std::vector<float> samples() {
  std::vector<float> x;
  for (float v = -88.0f; v <= 88.0f; v += 0.173f) x.push_back(v);
  for (float v = -0.1f; v <= 0.1f; v += 0.0031f) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 0.0624f, 0.0626f, -0.0625f, 88.2f, 88.8f, 100.0f,
                  -87.5f, -88.0f, -89.0f, -100.0f, 1e30f, -1e30f}) {
    x.push_back(v);
  }
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(-std::numeric_limits<float>::infinity());
  while (x.size() % 16 != 0) x.push_back(1.0f);
  return x;
}

enum class Fn { kExp, kSigmoid, kTanh };

std::vector<float> lanes8(Fn fn, const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (std::size_t i = 0; i < x.size(); i += 8) {
    const __m256 v = _mm256_loadu_ps(&x[i]);
    const __m256 r = fn == Fn::kExp ? exp8(v) : fn == Fn::kSigmoid ? sigmoid8(v) : tanh8(v);
    _mm256_storeu_ps(&y[i], r);
  }
  return y;
}

COLLAGE_AVX512 std::vector<float> lanes16(Fn fn, const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (std::size_t i = 0; i < x.size(); i += 16) {
    const __m512 v = _mm512_loadu_ps(&x[i]);
    const __m512 r = fn == Fn::kExp ? exp16(v) : fn == Fn::kSigmoid ? sigmoid16(v) : tanh16(v);
    _mm512_storeu_ps(&y[i], r);
  }
  return y;
}

double exact(Fn fn, double x) {
  switch (fn) {
    case Fn::kExp:
      return std::exp(x);
    case Fn::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case Fn::kTanh:
      return std::tanh(x);
  }
  return 0.0;
}

void expect_same(const std::vector<float>& x, const std::vector<float>& a,
                 const std::vector<float>& b) {
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(a[i], b[i]) << "x = " << x[i];
}

// Within 8 float ulps of the double-precision value where that is a normal
// float; a flushed or denormal result below, +inf above.
void expect_near_exact(Fn fn, const std::vector<float>& x, const std::vector<float>& y) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double expected = exact(fn, x[i]);
    if (std::fabs(expected) < FLT_MIN) {
      EXPECT_LT(std::fabs(y[i]), FLT_MIN) << "x = " << x[i];
    } else if (expected > FLT_MAX) {
      EXPECT_EQ(y[i], std::numeric_limits<float>::infinity()) << "x = " << x[i];
    } else {
      EXPECT_NEAR(y[i], expected, 8 * 1.2e-7 * std::fabs(expected)) << "x = " << x[i];
    }
  }
}

TEST(VectorMathTest, EightLaneFormsMatchDoublePrecision) {
  const std::vector<float> x = samples();
  for (Fn fn : {Fn::kExp, Fn::kSigmoid, Fn::kTanh}) expect_near_exact(fn, x, lanes8(fn, x));
}

TEST(VectorMathTest, SixteenLaneFormsGiveWhatTheEightLaneFormsGive) {
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512 on this processor";
  const std::vector<float> x = samples();
  for (Fn fn : {Fn::kExp, Fn::kSigmoid, Fn::kTanh}) {
    const std::vector<float> y = lanes16(fn, x);
    expect_same(x, y, lanes8(fn, x));
    expect_near_exact(fn, x, y);
  }
}

}  // namespace
}  // namespace collage::native
