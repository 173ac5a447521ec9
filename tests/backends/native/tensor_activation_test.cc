// Gelu and Swish, the single-op forms of the activations exporters write as
// chains, against their ONNX definitions evaluated in double precision.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "tensor_op_harness.h"

namespace collage::native_test {
namespace {

// A dense grid over the range where the functions bend, zero of both signs,
// tiny values, and magnitudes where exp, x^3 and x^2 overflow in float.
std::vector<float> activation_samples() {
  std::vector<float> samples;
  for (float x = -12.0f; x <= 12.0f; x += 0.37f) samples.push_back(x);
  for (float x : {0.0f, -0.0f, 1e-20f, -1e-20f, 1e-3f, -1e-3f, 30.0f, -30.0f, 100.0f, -100.0f, 1e4f,
                  -1e4f, 1e20f, -1e20f, 3e38f, -3e38f}) {
    samples.push_back(x);
  }
  samples.push_back(std::numeric_limits<float>::infinity());
  return samples;
}

Tensor activation(const std::string& op_type, const std::vector<float>& x, Attributes attributes,
                  std::int64_t opset) {
  const auto n = static_cast<std::int64_t>(x.size());
  return run_one({op_type, {{f32({n}, x)}}, {type(DType::kFloat32, {n})}, attributes, opset});
}

// Every output within a few float ulps of the double-precision value, or
// within 1e-30 of it where that value is too small for float. Where the
// result falls off like e^(-x^2/2), an ulp of rounding in x / sqrt(2) moves
// it by about x^2 ulps, so the allowance grows with x^2 (up to 200 ulps).
void expect_matches_double(const Tensor& actual, const std::vector<float>& x,
                           const std::function<double(double)>& exact) {
  ASSERT_EQ(actual.numel(), static_cast<std::int64_t>(x.size()));
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double expected = exact(static_cast<double>(x[i]));
    const double got = actual.data<float>()[i];
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(got)) << "x = " << x[i] << " gives " << got;
      continue;
    }
    if (std::isinf(expected)) {
      EXPECT_EQ(got, expected) << "x = " << x[i];
      continue;
    }
    const double ulps = 8.0 + std::min(static_cast<double>(x[i]) * x[i], 200.0);
    const double tolerance = ulps * 1.2e-7 * std::fabs(expected) + 1e-30;
    EXPECT_NEAR(got, expected, tolerance) << "x = " << x[i];
  }
}

// The references write 1 + erf(t) and 1 + tanh(u) in forms that do not
// cancel for negative arguments, where even double precision loses every
// digit of the sum: erfc(-t), and 2 / (1 + e^-2u).
double gelu_erf(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }

double gelu_tanh(double x) {
  const double u = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
  const double one_plus_tanh = u >= 0.0 ? 1.0 + std::tanh(u) : 2.0 / (1.0 + std::exp(-2.0 * u));
  return 0.5 * x * one_plus_tanh;
}

std::function<double(double)> swish(double alpha) {
  return [alpha](double x) { return x / (1.0 + std::exp(-alpha * x)); };
}

Attributes approximate(const std::string& form) {
  Attributes attributes;
  attributes.set("approximate", form);
  return attributes;
}

Attributes alpha(float value) {
  Attributes attributes;
  attributes.set("alpha", value);
  return attributes;
}

TEST(TensorActivationTest, GeluByDefaultIsTheErfForm) {
  const std::vector<float> x = activation_samples();
  expect_matches_double(activation("Gelu", x, {}, 20), x, gelu_erf);
}

TEST(TensorActivationTest, GeluWithApproximateNoneIsTheErfForm) {
  const std::vector<float> x = activation_samples();
  expect_matches_double(activation("Gelu", x, approximate("none"), 20), x, gelu_erf);
}

TEST(TensorActivationTest, GeluWithApproximateTanhIsTheTanhForm) {
  const std::vector<float> x = activation_samples();
  expect_matches_double(activation("Gelu", x, approximate("tanh"), 20), x, gelu_tanh);
}

TEST(TensorActivationTest, GeluOfALargeNegativeInputIsTinyButNotFlushedToZero) {
  // 1 + erf(x / sqrt(2)) cancels to 0 in float from x = -6 on; the result
  // itself is still a normal float there.
  const Tensor out = activation("Gelu", {-8.0f}, {}, 20);
  EXPECT_LT(out.data<float>()[0], 0.0f);
  EXPECT_NEAR(out.data<float>()[0], gelu_erf(-8.0), 1e-5 * std::fabs(gelu_erf(-8.0)));
}

TEST(TensorActivationTest, GeluWithAnUnknownApproximationIsNotSupported) {
  EXPECT_FALSE(op_supported(
      {"Gelu", {{f32({2}, {1, 2})}}, {type(DType::kFloat32, {2})}, approximate("sigmoid"), 20}));
}

TEST(TensorActivationTest, SwishByDefaultIsXTimesSigmoidOfX) {
  const std::vector<float> x = activation_samples();
  expect_matches_double(activation("Swish", x, {}, 24), x, swish(1.0));
}

TEST(TensorActivationTest, SwishScalesTheSigmoidArgumentByAlpha) {
  const std::vector<float> x = activation_samples();
  expect_matches_double(activation("Swish", x, alpha(1.702f), 24), x, swish(1.702f));
  expect_matches_double(activation("Swish", x, alpha(-0.5f), 24), x, swish(-0.5f));
}

TEST(TensorActivationTest, GeluAndSwishRunInGraphsOfAnEarlierOpset) {
  // The graph passes write them into models of any opset from 13 on.
  const std::vector<float> x = {-1.0f, 0.5f, 2.0f};
  expect_matches_double(activation("Gelu", x, approximate("tanh"), 13), x, gelu_tanh);
  expect_matches_double(activation("Swish", x, alpha(1.702f), 17), x, swish(1.702f));
}

TEST(TensorActivationTest, GeluAndSwishRejectNonFloatTensors) {
  for (const char* op : {"Gelu", "Swish"}) {
    EXPECT_FALSE(op_supported({op, {{i64({2}, {1, 2})}}, {type(DType::kInt64, {2})}, {}, 20}))
        << op;
  }
}

// The trigonometric and hyperbolic functions and their inverses, and the
// activations with a threshold, against double precision.
TEST(TensorActivationTest, TrigonometricAndThresholdFunctionsMatchDoublePrecision) {
  const std::vector<float> x = activation_samples();
  const std::vector<std::pair<std::string, double (*)(double)>> functions = {
      {"Tan", [](double v) { return std::tan(v); }},
      {"Asin", [](double v) { return std::asin(v); }},
      {"Acos", [](double v) { return std::acos(v); }},
      {"Atan", [](double v) { return std::atan(v); }},
      {"Sinh", [](double v) { return std::sinh(v); }},
      {"Cosh", [](double v) { return std::cosh(v); }},
      {"Asinh", [](double v) { return std::asinh(v); }},
      {"Acosh", [](double v) { return std::acosh(v); }},
      {"Atanh", [](double v) { return std::atanh(v); }},
      {"ThresholdedRelu", [](double v) { return v > 1.0 ? v : 0.0; }},
      {"Shrink", [](double v) { return v < -0.5  ? v
                                       : v > 0.5 ? v
                                                 : 0.0; }},
      {"Celu", [](double v) { return v > 0 ? v : std::expm1(v); }},
  };
  for (const auto& [op, exact] : functions) {
    SCOPED_TRACE(op);
    // Tan of a float far from zero: float and double reduce the same value.
    std::vector<float> samples;
    for (float v : x) {
      if (op != "Tan" || std::fabs(v) < 1e4f) samples.push_back(v);
    }
    // A value past float's range is infinity in float (Sinh, Cosh).
    auto in_float = [f = exact](double v) { return static_cast<double>(static_cast<float>(f(v))); };
    expect_matches_double(activation(op, samples, {}, 13), samples, in_float);
  }
  Attributes shrink;
  shrink.set("lambd", 1.5f);
  shrink.set("bias", 0.25f);
  expect_matches_double(activation("Shrink", x, shrink, 13), x, [](double v) {
    return v < -1.5 ? v + 0.25 : v > 1.5 ? v - 0.25 : 0.0;
  });
  Attributes alpha;
  alpha.set("alpha", 2.0f);
  expect_matches_double(activation("Celu", x, alpha, 13), x,
                        [](double v) { return v > 0 ? v : 2.0 * std::expm1(v / 2.0); });
  expect_matches_double(activation("ThresholdedRelu", x, alpha, 13), x,
                        [](double v) { return v > 2.0 ? v : 0.0; });
}

}  // namespace
}  // namespace collage::native_test
