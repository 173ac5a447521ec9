// Quantization ops against their ONNX definitions written per element.
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

}  // namespace
}  // namespace collage::native_test
