// oneDNN's int8 kernels (QLinearConv, MaxPool of 8-bit values) against the
// native reference: within one quantization step of the output for the
// convolution (oneDNN scales in float32 where the reference multiplies in
// double), exactly for the pooling.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "backends/onednn/onednn_test_util.h"
#include "collage/backends/onednn/op_support.h"

namespace collage::onednn_test {
namespace {

template <typename T>
Tensor random_integers(const Shape& shape, std::uint32_t seed, int low, int high) {
  Tensor tensor = Tensor::allocate(TensorType{dtype_of<T>(), shape});
  std::mt19937 engine(seed);
  std::uniform_int_distribution<int> distribution(low, high);
  for (std::int64_t i = 0; i < tensor.numel(); ++i) {
    tensor.data<T>()[i] = static_cast<T>(distribution(engine));
  }
  return tensor;
}

template <typename T>
Tensor scalar_of(T value) {
  return Tensor::from_vector<T>({value}, {});
}

struct QConvCase {
  std::string name;
  std::int64_t channels, out_channels, groups, stride, size;
  bool per_channel, bias, signed_input, signed_output;
};

// x (graph input) -> QLinearConv 3x3, pads 1 -> y.
Graph qconv_graph(const QConvCase& c) {
  Graph g;
  g.opset = 13;
  const DType x_type = c.signed_input ? DType::kInt8 : DType::kUInt8;
  const DType y_type = c.signed_output ? DType::kInt8 : DType::kUInt8;
  const ValueId x = g.add_input("x", TensorType{x_type, {1, c.channels, c.size, c.size}});
  auto eight_bit = [&](DType type, std::int32_t value) {
    return type == DType::kInt8 ? scalar_of<std::int8_t>(static_cast<std::int8_t>(value))
                                : scalar_of<std::uint8_t>(static_cast<std::uint8_t>(value));
  };
  std::vector<float> w_scales;
  for (std::int64_t m = 0; m < (c.per_channel ? c.out_channels : 1); ++m) {
    w_scales.push_back(0.002f + 0.001f * static_cast<float>(m % 5));
  }
  const auto scale_count = static_cast<std::int64_t>(w_scales.size());
  std::vector<ValueId> inputs = {
      x,
      g.add_constant("x_scale", scalar_of<float>(0.04f)),
      g.add_constant("x_zero", eight_bit(x_type, c.signed_input ? -3 : 120)),
      g.add_constant("w", random_integers<std::int8_t>(
                              {c.out_channels, c.channels / c.groups, 3, 3}, 7, -127, 127)),
      g.add_constant("w_scale", Tensor::from_vector<float>(w_scales, {scale_count})),
      g.add_constant("w_zero", Tensor::zeros(TensorType{DType::kInt8, {scale_count}})),
      g.add_constant("y_scale", scalar_of<float>(0.05f)),
      g.add_constant("y_zero", eight_bit(y_type, c.signed_output ? 5 : 100))};
  if (c.bias) {
    inputs.push_back(
        g.add_constant("bias", random_integers<std::int32_t>({c.out_channels}, 9, -2000, 2000)));
  }
  const std::int64_t out = (c.size + 2 - 3) / c.stride + 1;
  const ValueId y = g.add_value("y", TensorType{y_type, {1, c.out_channels, out, out}});
  g.add_node("QLinearConv", inputs, {y},
             attrs({{"group", c.groups},
                    {"pads", std::vector<std::int64_t>{1, 1, 1, 1}},
                    {"strides", std::vector<std::int64_t>{c.stride, c.stride}}}),
             "conv");
  g.add_output(y);
  return g;
}

// Random 8-bit inputs for every graph input.
std::vector<Tensor> random_eight_bit_inputs(const Graph& g, std::uint32_t seed) {
  std::vector<Tensor> inputs;
  for (ValueId input : g.inputs()) {
    const TensorType& type = g.type(input);
    inputs.push_back(type.dtype == DType::kInt8
                         ? random_integers<std::int8_t>(type.shape, seed++, -128, 127)
                         : random_integers<std::uint8_t>(type.shape, seed++, 0, 255));
  }
  return inputs;
}

// The largest |a - b| over the elements of two 8-bit tensors.
int largest_difference(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.type(), b.type());
  int largest = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    const int x = a.dtype() == DType::kInt8 ? a.data<std::int8_t>()[i] : a.data<std::uint8_t>()[i];
    const int y = b.dtype() == DType::kInt8 ? b.data<std::int8_t>()[i] : b.data<std::uint8_t>()[i];
    largest = std::max(largest, std::abs(x - y));
  }
  return largest;
}

class QLinearConvTest : public ::testing::TestWithParam<QConvCase> {};

TEST_P(QLinearConvTest, IsWithinOneStepOfTheReference) {
  if (!onednn::int8_products_exact())
    GTEST_SKIP() << "no VNNI: oneDNN leaves int8 products to native";
  const Graph g = qconv_graph(GetParam());
  ASSERT_TRUE(onednn_backend().supports(g, g.node(0)));
  const std::vector<Tensor> inputs = random_eight_bit_inputs(g, 3);
  const std::vector<Tensor> got = run_onednn(g, inputs, 2);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LE(largest_difference(got[0], run_reference(g, inputs)[0]), 1);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, QLinearConvTest,
    ::testing::Values(QConvCase{"PerTensorU8", 8, 16, 1, 1, 10, false, false, false, false},
                      QConvCase{"PerChannelWithBias", 8, 16, 1, 1, 10, true, true, false, false},
                      QConvCase{"GroupedStrided", 8, 16, 2, 2, 11, true, true, false, true},
                      QConvCase{"Depthwise", 16, 16, 16, 1, 9, true, true, false, false},
                      QConvCase{"SignedInput", 8, 8, 1, 1, 7, true, true, true, true}),
    [](const auto& info) { return info.param.name; });

TEST(QLinearConvClaimTest, ANonzeroWeightZeroPointIsNotClaimed) {
  QConvCase c{"", 8, 8, 1, 1, 6, true, false, false, false};
  Graph g = qconv_graph(c);
  Value& w_zero = g.value(g.node(0).input(5));
  Tensor zero_points = Tensor::zeros(TensorType{DType::kInt8, {8}});
  zero_points.data<std::int8_t>()[3] = 1;
  w_zero.constant = zero_points;
  EXPECT_FALSE(onednn_backend().supports(g, g.node(0)));
}

TEST(QuantizedPoolTest, MaxPoolOfEightBitValuesIsExact) {
  for (DType type : {DType::kUInt8, DType::kInt8}) {
    Graph g;
    const ValueId x = g.add_input("x", TensorType{type, {1, 16, 9, 9}});
    const ValueId y = g.add_value("y", TensorType{type, {1, 16, 4, 4}});
    g.add_node("MaxPool", {x}, {y},
               attrs({{"kernel_shape", std::vector<std::int64_t>{3, 3}},
                      {"strides", std::vector<std::int64_t>{2, 2}}}),
               "pool");
    g.add_output(y);
    ASSERT_TRUE(onednn_backend().supports(g, g.node(0)));
    const std::vector<Tensor> inputs = random_eight_bit_inputs(g, 11);
    EXPECT_EQ(largest_difference(run_onednn(g, inputs)[0], run_reference(g, inputs)[0]), 0)
        << dtype_name(type);
  }
}

// A (graph input) times a constant int8 B: QLinearMatMul of a batch of
// matrices with one scale per column, and com.microsoft QGemm with transB,
// an int32 C and a float32 or quantized result.
Graph qmatmul_graph(bool gemm, bool float_output) {
  Graph g;
  g.opset = 13;
  const Shape a_shape = gemm ? Shape{4, 32} : Shape{2, 3, 32};
  const ValueId a = g.add_input("a", TensorType{DType::kUInt8, a_shape});
  const std::int64_t n = 20;
  std::vector<float> b_scales;
  for (std::int64_t j = 0; j < n; ++j)
    b_scales.push_back(0.002f + 0.0005f * static_cast<float>(j % 7));
  std::vector<ValueId> inputs = {
      a,
      g.add_constant("a_scale", scalar_of<float>(0.03f)),
      g.add_constant("a_zero", scalar_of<std::uint8_t>(110)),
      g.add_constant(
          "b", random_integers<std::int8_t>(gemm ? Shape{n, 32} : Shape{32, n}, 5, -127, 127)),
      g.add_constant("b_scale", Tensor::from_vector<float>(b_scales, {n})),
      g.add_constant("b_zero", Tensor::zeros(TensorType{DType::kInt8, {n}}))};
  if (gemm) inputs.push_back(g.add_constant("c", random_integers<std::int32_t>({n}, 6, -500, 500)));
  if (!float_output) {
    inputs.push_back(g.add_constant("y_scale", scalar_of<float>(0.04f)));
    inputs.push_back(g.add_constant("y_zero", scalar_of<std::uint8_t>(128)));
  }
  Shape y_shape = a_shape;
  y_shape.back() = n;
  const ValueId y =
      g.add_value("y", TensorType{float_output ? DType::kFloat32 : DType::kUInt8, y_shape});
  const NodeId node = g.add_node(gemm ? "QGemm" : "QLinearMatMul", inputs, {y},
                                 gemm ? attrs({{"transB", std::int64_t{1}}}) : Attributes{}, "mm");
  if (gemm) {
    g.node(node).domain = "com.microsoft";
    g.other_opsets["com.microsoft"] = 1;
  }
  g.add_output(y);
  return g;
}

TEST(QLinearMatMulTest, QLinearMatMulAndQGemmAreWithinOneStepOfTheReference) {
  if (!onednn::int8_products_exact())
    GTEST_SKIP() << "no VNNI: oneDNN leaves int8 products to native";
  for (const auto& [gemm, float_output] :
       {std::pair{false, false}, std::pair{true, false}, std::pair{true, true}}) {
    const Graph g = qmatmul_graph(gemm, float_output);
    ASSERT_TRUE(onednn_backend().supports(g, g.node(0))) << gemm << float_output;
    const std::vector<Tensor> inputs = random_eight_bit_inputs(g, 4);
    const Tensor got = run_onednn(g, inputs, 2)[0];
    const Tensor want = run_reference(g, inputs)[0];
    if (float_output) {
      // Exact int32 sums, each scaled once in float32 on both sides.
      EXPECT_TRUE(all_close(got, want, 1e-6));
    } else {
      EXPECT_LE(largest_difference(got, want), 1) << gemm;
    }
  }
}

// Two parts of other scales and zero points along the channels.
TEST(QLinearConcatTest, PartsAreRequantizedWithinOneStepOfTheReference) {
  Graph g;
  g.opset = 13;
  g.other_opsets["com.microsoft"] = 1;
  const ValueId a = g.add_input("a", TensorType{DType::kUInt8, {1, 5, 6, 6}});
  const ValueId b = g.add_input("b", TensorType{DType::kUInt8, {1, 11, 6, 6}});
  const ValueId y = g.add_value("y", TensorType{DType::kUInt8, {1, 16, 6, 6}});
  const NodeId node = g.add_node("QLinearConcat",
                                 {g.add_constant("ys", scalar_of<float>(0.05f)),
                                  g.add_constant("yz", scalar_of<std::uint8_t>(20)), a,
                                  g.add_constant("as", scalar_of<float>(0.03f)),
                                  g.add_constant("az", scalar_of<std::uint8_t>(128)), b,
                                  g.add_constant("bs", scalar_of<float>(0.07f)),
                                  g.add_constant("bz", scalar_of<std::uint8_t>(3))},
                                 {y}, attrs({{"axis", std::int64_t{1}}}), "concat");
  g.node(node).domain = "com.microsoft";
  g.add_output(y);
  ASSERT_TRUE(onednn_backend().supports(g, g.node(0)));
  const std::vector<Tensor> inputs = random_eight_bit_inputs(g, 8);
  EXPECT_LE(largest_difference(run_onednn(g, inputs)[0], run_reference(g, inputs)[0]), 1);
}

}  // namespace
}  // namespace collage::onednn_test
