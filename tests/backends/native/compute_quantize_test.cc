// Quantization ops against their ONNX definitions written per element.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backends/native/compute_op_harness.h"

namespace collage::native_test {
namespace {

template <typename T>
Tensor typed(Shape shape, const std::vector<T>& values) {
  return Tensor::from_vector<T>(values, std::move(shape));
}

template <typename T>
std::vector<T> contents(const Tensor& tensor) {
  return std::vector<T>(tensor.data<T>(), tensor.data<T>() + tensor.numel());
}

// Halves round to even, the result saturates, and a scale per index of the
// axis applies along it.
TEST(QuantizeTest, QuantizeLinearRoundsHalvesToEvenAndSaturatesPerAxis) {
  const Tensor x = f32_tensor({2, 3}, {0.5f, 1.5f, 2.5f, -300.0f, 300.0f, -0.5f});
  ComputeCase per_tensor{"QuantizeLinear",
                         {x, f32_tensor({}, {1.0f}), typed<std::uint8_t>({}, {10})},
                         {TensorType{DType::kUInt8, {2, 3}}}};
  EXPECT_EQ(contents<std::uint8_t>(per_tensor.run_one()),
            (std::vector<std::uint8_t>{10, 12, 12, 0, 255, 10}));
  Attributes axis;
  axis.set("axis", std::int64_t{1});
  ComputeCase per_axis{
      "QuantizeLinear",
      {x, f32_tensor({3}, {0.5f, 1.0f, 2.0f}), typed<std::int8_t>({3}, {0, -1, 1})},
      {TensorType{DType::kInt8, {2, 3}}},
      axis};
  // x / scale: 1, 1.5, 1.25, -600, 300, -0.25 -> 1, 2, 1, sat, sat, -0; plus zp.
  EXPECT_EQ(contents<std::int8_t>(per_axis.run_one()),
            (std::vector<std::int8_t>{1, 1, 2, -128, 127, 1}));
}

TEST(QuantizeTest, DequantizeLinearSubtractsTheZeroPointAndScales) {
  ComputeCase c{"DequantizeLinear",
                {typed<std::uint8_t>({4}, {0, 10, 128, 255}), f32_tensor({}, {0.5f}),
                 typed<std::uint8_t>({}, {128})},
                {f32_type({4})}};
  expect_close(c.run_one(), {-64.0f, -59.0f, 0.0f, 63.5f}, 0.0f);
}

// MatMulInteger: (A - a_zp) (B - b_zp) in int32, A's zero point per row, B's
// per column, and a batch of A against one B.
TEST(QuantizeTest, MatMulIntegerSubtractsZeroPointsPerRowAndColumnAndBroadcasts) {
  const std::int64_t batch = 2, m = 3, k = 4, n = 5;
  std::vector<std::uint8_t> a(static_cast<std::size_t>(batch * m * k));
  std::vector<std::int8_t> b(static_cast<std::size_t>(k * n));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint8_t>((i * 37) % 256);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::int8_t>((i * 53) % 256 - 128);
  const std::vector<std::uint8_t> a_zp = {3, 200, 128};
  const std::vector<std::int8_t> b_zp = {0, -5, 7, 100, -128};
  ComputeCase c{"MatMulInteger",
                {typed<std::uint8_t>({batch, m, k}, a), typed<std::int8_t>({k, n}, b),
                 typed<std::uint8_t>({m}, a_zp), typed<std::int8_t>({n}, b_zp)},
                {TensorType{DType::kInt32, {batch, m, n}}}};
  c.threads = 2;
  const std::vector<std::int32_t> got = contents<std::int32_t>(c.run_one());
  for (std::int64_t t = 0; t < batch; ++t) {
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        std::int64_t sum = 0;
        for (std::int64_t p = 0; p < k; ++p) {
          sum += (std::int64_t{a[(t * m + i) * k + p]} - a_zp[i]) *
                 (std::int64_t{b[p * n + j]} - b_zp[j]);
        }
        EXPECT_EQ(got[(t * m + i) * n + j], sum) << t << "," << i << "," << j;
      }
    }
  }
}

// QLinearConv with int8 data, per-channel weight scales and zero points,
// padding, groups and a bias: the int32 sums of the shifted values, times
// x_scale * w_scale[m] / y_scale in double, plus y's zero point, saturated
// and rounded half to even.
TEST(QuantizeTest, QLinearConvRequantizesPerChannelWithGroupsPaddingAndBias) {
  const std::int64_t c = 4, m = 4, groups = 2, size = 3;
  std::vector<std::int8_t> x(static_cast<std::size_t>(c * size * size));
  std::vector<std::int8_t> w(static_cast<std::size_t>(m * (c / groups) * 9));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::int8_t>((i * 29) % 256 - 128);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<std::int8_t>((i * 41) % 200 - 100);
  const std::vector<float> w_scale = {0.01f, 0.02f, 0.005f, 0.04f};
  const std::vector<std::int8_t> w_zero = {0, 3, -2, 1};
  const std::vector<std::int32_t> bias = {100, -200, 0, 5000};
  const float x_scale = 0.05f, y_scale = 0.7f;
  const std::int8_t x_zero = -3, y_zero = 4;
  Attributes attributes;
  attributes.set("group", groups);
  attributes.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
  ComputeCase conv{
      "QLinearConv",
      {typed<std::int8_t>({1, c, size, size}, x), f32_tensor({}, {x_scale}),
       typed<std::int8_t>({}, {x_zero}), typed<std::int8_t>({m, c / groups, 3, 3}, w),
       f32_tensor({m}, w_scale), typed<std::int8_t>({m}, w_zero), f32_tensor({}, {y_scale}),
       typed<std::int8_t>({}, {y_zero}), typed<std::int32_t>({m}, bias)},
      {TensorType{DType::kInt8, {1, m, size, size}}},
      attributes};
  conv.threads = 2;
  const std::vector<std::int8_t> got = contents<std::int8_t>(conv.run_one());
  for (std::int64_t oc = 0; oc < m; ++oc) {
    const std::int64_t g = oc / (m / groups);
    for (std::int64_t oy = 0; oy < size; ++oy) {
      for (std::int64_t ox = 0; ox < size; ++ox) {
        std::int64_t sum = bias[oc];
        for (std::int64_t ic = 0; ic < c / groups; ++ic) {
          for (std::int64_t ky = 0; ky < 3; ++ky) {
            for (std::int64_t kx = 0; kx < 3; ++kx) {
              const std::int64_t iy = oy + ky - 1, ix = ox + kx - 1;
              if (iy < 0 || iy >= size || ix < 0 || ix >= size) continue;
              const std::int64_t xv = x[((g * (c / groups) + ic) * size + iy) * size + ix] - x_zero;
              const std::int64_t wv = w[((oc * (c / groups) + ic) * 3 + ky) * 3 + kx] - w_zero[oc];
              sum += xv * wv;
            }
          }
        }
        const double ratio = static_cast<double>(x_scale * w_scale[oc] / y_scale);
        const double r = std::clamp(static_cast<double>(sum) * ratio + y_zero, -128.0, 127.0);
        EXPECT_EQ(got[(oc * size + oy) * size + ox], static_cast<std::int8_t>(std::nearbyint(r)))
            << oc << "," << oy << "," << ox;
      }
    }
  }
}

// collage.QLinearConvTranspose with uint8 data, groups, stride 2, padding,
// output_padding, scales and zero points per output channel of a group
// (shared by the groups) and a bias: every input position scatters
// (x - x_zero) * (w - w_zero) onto the outputs its taps reach, then the
// sums requantize as QLinearConv's do.
TEST(QuantizeTest, QLinearConvTransposeScattersTheShiftedProductsAndRequantizes) {
  const std::int64_t c = 4, m = 6, groups = 2, size = 3, k = 3, stride = 2;
  const std::int64_t cg = c / groups, mg = m / groups;
  // (3 - 1) * 2 - 1 - 1 + 3 + 1 (output_padding) = 6.
  const std::int64_t out = 6;
  std::vector<std::uint8_t> x(static_cast<std::size_t>(c * size * size));
  std::vector<std::int8_t> w(static_cast<std::size_t>(c * mg * k * k));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::uint8_t>((i * 37) % 256);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<std::int8_t>((i * 53) % 220 - 110);
  const std::vector<float> w_scale = {0.01f, 0.03f, 0.002f};
  const std::vector<std::int8_t> w_zero = {0, -2, 5};
  const std::vector<std::int32_t> bias = {100, -200, 0, 5000, -7, 33};
  const float x_scale = 0.05f, y_scale = 0.3f;
  const std::uint8_t x_zero = 130, y_zero = 120;
  Attributes attributes;
  attributes.set("group", groups);
  attributes.set("strides", std::vector<std::int64_t>{stride, stride});
  attributes.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
  attributes.set("output_padding", std::vector<std::int64_t>{1, 1});
  ComputeCase conv{
      "collage.QLinearConvTranspose",
      {typed<std::uint8_t>({1, c, size, size}, x), f32_tensor({}, {x_scale}),
       typed<std::uint8_t>({}, {x_zero}), typed<std::int8_t>({c, mg, k, k}, w),
       f32_tensor({mg}, w_scale), typed<std::int8_t>({mg}, w_zero), f32_tensor({}, {y_scale}),
       typed<std::uint8_t>({}, {y_zero}), typed<std::int32_t>({m}, bias)},
      {TensorType{DType::kUInt8, {1, m, out, out}}},
      attributes};
  conv.threads = 2;
  const std::vector<std::uint8_t> got = contents<std::uint8_t>(conv.run_one());
  std::vector<std::int64_t> sums(static_cast<std::size_t>(m * out * out));
  for (std::int64_t oc = 0; oc < m; ++oc) {
    std::fill_n(sums.begin() + oc * out * out, out * out, bias[oc]);
  }
  for (std::int64_t ic = 0; ic < c; ++ic) {
    const std::int64_t g = ic / cg;
    for (std::int64_t o = 0; o < mg; ++o) {
      const std::int64_t oc = g * mg + o;
      for (std::int64_t iy = 0; iy < size; ++iy) {
        for (std::int64_t ix = 0; ix < size; ++ix) {
          for (std::int64_t ky = 0; ky < k; ++ky) {
            for (std::int64_t kx = 0; kx < k; ++kx) {
              const std::int64_t oy = iy * stride - 1 + ky, ox = ix * stride - 1 + kx;
              if (oy < 0 || oy >= out || ox < 0 || ox >= out) continue;
              const std::int64_t xv = x[(ic * size + iy) * size + ix] - x_zero;
              const std::int64_t wv = w[((ic * mg + o) * k + ky) * k + kx] - w_zero[o];
              sums[(oc * out + oy) * out + ox] += xv * wv;
            }
          }
        }
      }
    }
  }
  for (std::int64_t oc = 0; oc < m; ++oc) {
    const double ratio = static_cast<double>(x_scale * w_scale[oc % mg] / y_scale);
    for (std::int64_t p = 0; p < out * out; ++p) {
      const double r =
          std::clamp(static_cast<double>(sums[oc * out * out + p]) * ratio + y_zero, 0.0, 255.0);
      EXPECT_EQ(got[oc * out * out + p], static_cast<std::uint8_t>(std::nearbyint(r)))
          << oc << "," << p;
    }
  }
}

// com.microsoft.QLinearSoftmax: dequantize, softmax along the axis (opset
// 13: that axis alone; opset 11: the matrix the axis splits the shape
// into), quantize.
TEST(QuantizeTest, QLinearSoftmaxIsTheFloatSoftmaxBetweenDequantizeAndQuantize) {
  const std::vector<std::uint8_t> x = {10, 20, 30, 40, 50, 60, 255, 0, 128, 129, 130, 131};
  const float x_scale = 0.05f, y_scale = 1.0f / 256.0f;
  const std::uint8_t x_zero = 128;
  for (const std::int64_t opset : {13, 11}) {
    Attributes attributes;
    attributes.set("axis", std::int64_t{1});
    attributes.set("opset", opset);
    ComputeCase softmax{"com.microsoft.QLinearSoftmax",
                        {typed<std::uint8_t>({2, 2, 3}, x), f32_tensor({}, {x_scale}),
                         typed<std::uint8_t>({}, {x_zero}), f32_tensor({}, {y_scale}),
                         typed<std::uint8_t>({}, {0})},
                        {TensorType{DType::kUInt8, {2, 2, 3}}},
                        attributes};
    const std::vector<std::uint8_t> got = contents<std::uint8_t>(softmax.run_one());
    // opset 13: over axis 1 (2 values, stride 3); opset 11: over the last 6.
    for (std::int64_t i = 0; i < 12; ++i) {
      const std::int64_t n = i / 6, rest = i % 6, c = rest / 3, w = rest % 3;
      double sum = 0;
      for (std::int64_t j = 0; j < 6; ++j) {
        if (opset == 13 && j % 3 != w) continue;
        sum += std::exp((x[n * 6 + j] - x_zero) * static_cast<double>(x_scale));
      }
      const double value = std::exp((x[n * 6 + c * 3 + w] - x_zero) * double{x_scale}) / sum;
      const double q = std::clamp(std::nearbyint(value / y_scale), 0.0, 255.0);
      EXPECT_NEAR(got[i], q, 1.0) << "opset " << opset << ", element " << i;
    }
  }
}

// com.microsoft.QLinearAdd: dequantize both, add with broadcasting, quantize.
TEST(QuantizeTest, QLinearAddBroadcastsAndRoundsHalvesToEven) {
  ComputeCase add{
      "com.microsoft.QLinearAdd",
      {typed<std::uint8_t>({2, 3}, {10, 12, 14, 20, 30, 255}), f32_tensor({}, {0.5f}),
       typed<std::uint8_t>({}, {10}), typed<std::uint8_t>({3}, {0, 4, 8}), f32_tensor({}, {0.25f}),
       typed<std::uint8_t>({}, {0}), f32_tensor({}, {1.0f}), typed<std::uint8_t>({}, {5})},
      {TensorType{DType::kUInt8, {2, 3}}}};
  // A: 0 1 2 5 10 122.5; B: 0 1 2; sums 0 2 4 5 11 124.5 -> 124; plus 5.
  EXPECT_EQ(contents<std::uint8_t>(add.run_one()),
            (std::vector<std::uint8_t>{5, 7, 9, 10, 16, 129}));
}

TEST(QuantizeTest, QLinearMulMultipliesTheDequantizedValues) {
  ComputeCase mul{"com.microsoft.QLinearMul",
                  {typed<std::int8_t>({3}, {-4, 6, 127}), f32_tensor({}, {0.5f}),
                   typed<std::int8_t>({}, {0}), typed<std::int8_t>({}, {2}), f32_tensor({}, {1.0f}),
                   Tensor(), f32_tensor({}, {2.0f}), typed<std::int8_t>({}, {-1})},
                  {TensorType{DType::kInt8, {3}}}};
  // -2 3 63.5, times 2: -4 6 127, over 2: -2 3 63.5 -> 64; minus 1.
  EXPECT_EQ(contents<std::int8_t>(mul.run_one()), (std::vector<std::int8_t>{-3, 2, 63}));
}

TEST(QuantizeTest, QLinearSigmoidLeakyReluHardSwishAndHardSigmoidMapEveryValueThroughTheFloatOp) {
  ComputeCase sigmoid{"com.microsoft.QLinearSigmoid",
                      {typed<std::uint8_t>({5}, {128, 148, 108, 0, 255}), f32_tensor({}, {0.1f}),
                       typed<std::uint8_t>({}, {128}), f32_tensor({}, {1.0f / 256.0f}),
                       typed<std::uint8_t>({}, {0})},
                      {TensorType{DType::kUInt8, {5}}}};
  // sigmoid(0, 2, -2, -12.8, 12.7) * 256 = 128, 225.5, 30.5, 0.0007, 255.999.
  EXPECT_EQ(contents<std::uint8_t>(sigmoid.run_one()),
            (std::vector<std::uint8_t>{128, 225, 31, 0, 255}));
  Attributes alpha;
  alpha.set("alpha", 0.1f);
  ComputeCase leaky{
      "com.microsoft.QLinearLeakyRelu",
      {typed<std::int8_t>({4}, {-100, -5, 0, 50}), f32_tensor({}, {1.0f}),
       typed<std::int8_t>({}, {0}), f32_tensor({}, {0.5f}), typed<std::int8_t>({}, {0})},
      {TensorType{DType::kInt8, {4}}},
      alpha};
  // -10, -0.5, 0, 50 over 0.5.
  EXPECT_EQ(contents<std::int8_t>(leaky.run_one()), (std::vector<std::int8_t>{-20, -1, 0, 100}));
  ComputeCase hard_swish{
      "collage.QLinearHardSwish",
      {typed<std::int8_t>({5}, {-40, -10, 0, 10, 40}), f32_tensor({}, {0.1f}),
       typed<std::int8_t>({}, {0}), f32_tensor({}, {0.05f}), typed<std::int8_t>({}, {0})},
      {TensorType{DType::kInt8, {5}}}};
  // hard_swish(-4, -1, 0, 1, 4) = 0, -1/3, 0, 2/3, 4; over 0.05.
  EXPECT_EQ(contents<std::int8_t>(hard_swish.run_one()),
            (std::vector<std::int8_t>{0, -7, 0, 13, 80}));
  ComputeCase hard_sigmoid = hard_swish;
  hard_sigmoid.op_type = "collage.QLinearHardSigmoid";
  hard_sigmoid.attributes.set("alpha", 0.25f);
  hard_sigmoid.inputs[3] = f32_tensor({}, {1.0f / 100.0f});
  // clip(0.25 v + 0.5, 0, 1) for v = -4, -1, 0, 1, 4: 0, 0.25, 0.5, 0.75, 1.
  EXPECT_EQ(contents<std::int8_t>(hard_sigmoid.run_one()),
            (std::vector<std::int8_t>{0, 25, 50, 75, 100}));
}

TEST(QuantizeTest, QLinearPoolsAverageTheDequantizedValuesChannelsFirstOrLast) {
  const Tensor x = typed<std::uint8_t>({1, 2, 2, 2}, {1, 2, 3, 4, 10, 10, 10, 11});
  auto global = [&](std::int64_t channels_last, Shape out) {
    Attributes attributes;
    attributes.set("channels_last", channels_last);
    return ComputeCase{"com.microsoft.QLinearGlobalAveragePool",
                       {x, f32_tensor({}, {2.0f}), typed<std::uint8_t>({}, {1}),
                        f32_tensor({}, {1.0f}), typed<std::uint8_t>({}, {0})},
                       {TensorType{DType::kUInt8, std::move(out)}},
                       attributes};
  };
  // Channels first: means of 0 2 4 6 and 18 18 18 20: 3 and 18.5 -> 18.
  EXPECT_EQ(contents<std::uint8_t>(global(0, {1, 2, 1, 1}).run_one()),
            (std::vector<std::uint8_t>{3, 18}));
  // Channels last: means of 0 4 18 18 and 2 6 18 20: 10 and 11.5 -> 12.
  EXPECT_EQ(contents<std::uint8_t>(global(1, {1, 1, 1, 2}).run_one()),
            (std::vector<std::uint8_t>{10, 12}));
  Attributes window;
  window.set("kernel_shape", std::vector<std::int64_t>{2, 2});
  ComputeCase average{
      "com.microsoft.QLinearAveragePool",
      {typed<std::uint8_t>({1, 1, 2, 2}, {0, 1, 2, 4}), f32_tensor({}, {1.0f}),
       typed<std::uint8_t>({}, {0}), f32_tensor({}, {0.5f}), typed<std::uint8_t>({}, {0})},
      {TensorType{DType::kUInt8, {1, 1, 1, 1}}},
      window};
  // The mean 1.75 over 0.5: 3.5 -> 4.
  EXPECT_EQ(contents<std::uint8_t>(average.run_one()), (std::vector<std::uint8_t>{4}));
}

TEST(QuantizeTest, QLinearConcatRequantizesEachInputToTheOutputsParameters) {
  Attributes axis;
  axis.set("axis", std::int64_t{1});
  ComputeCase concat{
      "com.microsoft.QLinearConcat",
      {f32_tensor({}, {1.0f}), typed<std::uint8_t>({}, {0}), typed<std::uint8_t>({1, 2}, {1, 2}),
       f32_tensor({}, {2.0f}), typed<std::uint8_t>({}, {0}), typed<std::uint8_t>({1, 1}, {13}),
       f32_tensor({}, {0.5f}), typed<std::uint8_t>({}, {10})},
      {TensorType{DType::kUInt8, {1, 3}}},
      axis};
  // 2 4 from the first input; (13 - 10) * 0.5 = 1.5 -> 2 from the second.
  EXPECT_EQ(contents<std::uint8_t>(concat.run_one()), (std::vector<std::uint8_t>{2, 4, 2}));
}

// com.microsoft.QGemm: int32 sums of the shifted operands plus C, times
// alpha * a_scale * b_scale[column]; float32 without y_scale, else quantized.
TEST(QuantizeTest, QGemmAddsTheInt32BiasAndScalesPerColumn) {
  const std::vector<std::uint8_t> a = {1, 5, 9, 200, 0, 7};     // [2, 3]
  const std::vector<std::int8_t> b = {3, -4, 0, 100, -128, 6};  // transposed: [2 columns, 3]
  const std::vector<float> b_scale = {1.0f, 0.25f};
  const std::vector<std::int32_t> c = {4, -8};
  const float a_scale = 0.5f, alpha = 2.0f;
  const std::int32_t a_zero = 1;
  Attributes attributes;
  attributes.set("transB", std::int64_t{1});
  attributes.set("alpha", alpha);
  std::vector<Tensor> inputs = {typed<std::uint8_t>({2, 3}, a), f32_tensor({}, {a_scale}),
                                typed<std::uint8_t>({}, {1}),   typed<std::int8_t>({2, 3}, b),
                                f32_tensor({2}, b_scale),       Tensor(),
                                typed<std::int32_t>({2}, c)};
  std::vector<float> expected;
  for (std::int64_t i = 0; i < 2; ++i) {
    for (std::int64_t j = 0; j < 2; ++j) {
      std::int32_t sum = c[j];
      for (std::int64_t p = 0; p < 3; ++p) sum += (a[i * 3 + p] - a_zero) * b[j * 3 + p];
      expected.push_back(static_cast<float>(sum) * (alpha * a_scale * b_scale[j]));
    }
  }
  ComputeCase float_out{"com.microsoft.QGemm", inputs, {f32_type({2, 2})}, attributes};
  expect_close(float_out.run_one(), expected, 0.0f);

  inputs.push_back(f32_tensor({}, {4.0f}));
  inputs.push_back(typed<std::int8_t>({}, {-10}));
  ComputeCase quantized_out{
      "com.microsoft.QGemm", inputs, {TensorType{DType::kInt8, {2, 2}}}, attributes};
  std::vector<std::int8_t> expected_q;
  for (float v : expected) {
    expected_q.push_back(
        static_cast<std::int8_t>(std::clamp(std::nearbyint(v / 4.0f) - 10.0f, -128.0f, 127.0f)));
  }
  EXPECT_EQ(contents<std::int8_t>(quantized_out.run_one()), expected_q);
}

// Quantized models pool 8-bit values directly.
TEST(QuantizeTest, MaxPoolTakesEightBitValues) {
  Attributes window;
  window.set("kernel_shape", std::vector<std::int64_t>{2, 2});
  window.set("strides", std::vector<std::int64_t>{2, 2});
  ComputeCase pool{"MaxPool",
                   {typed<std::int8_t>({1, 1, 2, 4}, {-128, -5, 3, 127, -100, -6, 2, 1})},
                   {TensorType{DType::kInt8, {1, 1, 1, 2}}},
                   window};
  EXPECT_EQ(contents<std::int8_t>(pool.run_one()), (std::vector<std::int8_t>{-5, 127}));
}

// A quantized model's Resize between a cancelling pair: the 8-bit values
// themselves, interpolated in float32 and rounded half to even.
TEST(QuantizeTest, ResizeTakesEightBitValues) {
  const Tensor scales = f32_tensor({4}, {1.0f, 1.0f, 1.0f, 2.0f});
  Attributes nearest;
  nearest.set("mode", std::string("nearest"));
  ComputeCase copy{"Resize",
                   {typed<std::uint8_t>({1, 1, 1, 2}, {7, 255}), Tensor(), scales},
                   {TensorType{DType::kUInt8, {1, 1, 1, 4}}},
                   nearest};
  EXPECT_EQ(contents<std::uint8_t>(copy.run_one()), (std::vector<std::uint8_t>{7, 7, 255, 255}));
  // half_pixel: the outputs sit at 0, 0.25, 0.75 and 1 of the way from -10 to 11.
  Attributes linear;
  linear.set("mode", std::string("linear"));
  ComputeCase blend{"Resize",
                    {typed<std::int8_t>({1, 1, 1, 2}, {-10, 11}), Tensor(), scales},
                    {TensorType{DType::kInt8, {1, 1, 1, 4}}},
                    linear};
  EXPECT_EQ(contents<std::int8_t>(blend.run_one()), (std::vector<std::int8_t>{-10, -5, 6, 11}));
  // tf_crop_and_resize writes a real extrapolation value: float32 only.
  ComputeCase crop = blend;
  crop.attributes.set("coordinate_transformation_mode", std::string("tf_crop_and_resize"));
  EXPECT_FALSE(crop.supported());
}

}  // namespace
}  // namespace collage::native_test
