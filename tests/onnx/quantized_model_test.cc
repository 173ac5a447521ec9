// Quantized models at import: a QOperator model with ONNX Runtime's
// com.microsoft ops is typed and runs on the reference executor, close to
// the float computation it quantizes; malformed quantization parameters are
// refused with the node named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "collage/backends/native/native_backend.h"
#include "collage/ir/error.h"
#include "collage/onnx/importer.h"
#include "onnx/error_text.h"
#include "onnx/model_builder.h"
#include "onnx/reference_run.h"

namespace collage {
namespace {

using testing::attr;
using testing::contains;
using testing::error_of;
using testing::ModelBuilder;

template <typename T>
Tensor values(Shape shape, const std::vector<T>& data) {
  return Tensor::from_vector<T>(data, {static_cast<std::int64_t>(data.size())})
      .reshaped(std::move(shape));
}
Tensor scalar_f32(float v) { return values<float>({}, {v}); }
Tensor scalar_u8(std::uint8_t v) { return values<std::uint8_t>({}, {v}); }

void import_microsoft_domain(ModelBuilder& m) {
  auto* import = m.model().add_opset_import();
  import->set_domain("com.microsoft");
  import->set_version(1);
}

// x f32[1,2,4,4] -> QuantizeLinear -> QLinearConv 1x1 (3 channels,
// per-channel int8 weights, bias) -> QLinearLeakyRelu -> QLinearAdd (with
// the convolution) -> QLinearGlobalAveragePool -> DequantizeLinear.
struct QOperatorModel {
  std::vector<std::int8_t> w = {10, -20, 7, 3, -15, 12};  // [3, 2, 1, 1]
  std::vector<float> w_scale = {0.05f, 0.02f, 0.1f};
  std::vector<std::int32_t> bias = {40, -100, 0};
  float x_scale = 0.05f, conv_scale = 0.1f, sum_scale = 0.2f, alpha = 0.1f;

  ModelBuilder build() const {
    ModelBuilder m;
    import_microsoft_domain(m);
    m.input("x", {1, 2, 4, 4})
        .initializer("xs", scalar_f32(x_scale))
        .initializer("xz", scalar_u8(128))
        .initializer("w", values<std::int8_t>({3, 2, 1, 1}, w))
        .initializer("ws", values<float>({3}, w_scale))
        .initializer("wz", values<std::int8_t>({3}, {0, 0, 0}))
        .initializer("cs", scalar_f32(conv_scale))
        .initializer("cz", scalar_u8(100))
        .initializer("b", values<std::int32_t>({3}, bias))
        .initializer("ss", scalar_f32(sum_scale))
        .initializer("sz", scalar_u8(50))
        .node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"})
        .node("QLinearConv", {"xq", "xs", "xz", "w", "ws", "wz", "cs", "cz", "b"}, {"c"})
        .node("QLinearLeakyRelu", {"c", "cs", "cz", "cs", "cz"}, {"l"}, {attr("alpha", alpha)},
              "com.microsoft")
        .node("QLinearAdd", {"l", "cs", "cz", "c", "cs", "cz", "ss", "sz"}, {"s"}, {},
              "com.microsoft")
        .node("QLinearGlobalAveragePool", {"s", "ss", "sz", "ss", "sz"}, {"p"}, {}, "com.microsoft")
        .node("DequantizeLinear", {"p", "ss", "sz"}, {"y"})
        .output("y");
    return m;
  }

  // The float computation the model quantizes.
  std::vector<float> expected(const Tensor& x) const {
    std::vector<float> out;
    for (int m = 0; m < 3; ++m) {
      float sum = 0.0f;
      for (int i = 0; i < 16; ++i) {
        float conv = static_cast<float>(bias[m]) * x_scale * w_scale[m];
        for (int c = 0; c < 2; ++c) {
          conv += x.data<float>()[c * 16 + i] * static_cast<float>(w[m * 2 + c]) * w_scale[m];
        }
        sum += (conv >= 0.0f ? conv : alpha * conv) + conv;
      }
      out.push_back(sum / 16.0f);
    }
    return out;
  }
};

TEST(QuantizedModelTest, AQOperatorModelWithMicrosoftOpsIsTypedAndRunsCloseToItsFloatForm) {
  const QOperatorModel model;
  Graph g = testing::import_with_native(model.build());
  EXPECT_EQ(g.type(g.outputs()[0]), (TensorType{DType::kFloat32, {1, 3, 1, 1}}));
  const Node& add = testing::only_node(g, "QLinearAdd");
  EXPECT_EQ(add.domain, "com.microsoft");
  EXPECT_EQ(g.type(add.outputs[0]), (TensorType{DType::kUInt8, {1, 3, 4, 4}}));

  Tensor x = Tensor::allocate(TensorType{DType::kFloat32, {1, 2, 4, 4}});
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    x.data<float>()[i] = std::sin(static_cast<float>(i) * 0.7f) * 3.0f;
  }
  const std::vector<Tensor> out = testing::run_reference(g, {x});
  const std::vector<float> expected = model.expected(x);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    // Rounding to the steps of x (0.05), the convolution (0.1) and the sum
    // (0.2) on the way: within two steps of the output.
    EXPECT_NEAR(out[0].data<float>()[i], expected[i], 2 * model.sum_scale) << i;
  }
}

// x -> QuantizeLinear -> DequantizeLinear -> Conv 3x3 (int8 weights behind
// a DequantizeLinear, a float bias) -> Relu -> QuantizeLinear (zero point
// 0) -> DequantizeLinear -> y: the form of QDQ models.
ModelBuilder qdq_convolution() {
  std::vector<std::int8_t> w(4 * 2 * 9);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<std::int8_t>((i * 37) % 255 - 127);
  ModelBuilder m;
  m.input("x", {1, 2, 6, 6})
      .initializer("xs", scalar_f32(0.03f))
      .initializer("xz", scalar_u8(128))
      .initializer("w", values<std::int8_t>({4, 2, 3, 3}, w))
      .initializer("ws", values<float>({4}, {0.004f, 0.002f, 0.003f, 0.005f}))
      .initializer("b", values<float>({4}, {0.1f, -0.2f, 0.05f, 0.0f}))
      .initializer("ys", scalar_f32(0.02f))
      .initializer("yz", scalar_u8(0))
      .node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"})
      .node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"})
      .node("DequantizeLinear", {"w", "ws"}, {"wd"}, {attr("axis", std::int64_t{0})})
      .node("Conv", {"xd", "wd", "b"}, {"c"}, {attr("pads", std::vector<std::int64_t>{1, 1, 1, 1})})
      .node("Relu", {"c"}, {"r"})
      .node("QuantizeLinear", {"r", "ys", "yz"}, {"yq"})
      .node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"})
      .output("y");
  return m;
}

TEST(QuantizedModelTest, AQdqConvolutionRunsAsOneQLinearConvWithinOneStepOfItsSpelling) {
  ImportOptions spelled;
  spelled.evaluator = &native_evaluator();
  spelled.graph_opt = GraphOptLevel::kNone;
  const Graph as_written = import_onnx_model(qdq_convolution().shared(), spelled);
  const Graph fused = testing::import_with_native(qdq_convolution());
  EXPECT_EQ(testing::only_node(fused, "QLinearConv").op_type, "QLinearConv");
  for (const Node& node : fused.nodes()) EXPECT_NE(node.op_type, "Conv");

  Tensor x = Tensor::allocate(TensorType{DType::kFloat32, {1, 2, 6, 6}});
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    x.data<float>()[i] = std::cos(static_cast<float>(i) * 1.3f) * 3.0f;
  }
  const Tensor a = testing::run_reference(as_written, {x})[0];
  const Tensor b = testing::run_reference(fused, {x})[0];
  int positive = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    EXPECT_NEAR(a.data<float>()[i], b.data<float>()[i], 0.02f * 1.001f) << i;
    positive += a.data<float>()[i] > 0.0f;
  }
  EXPECT_GT(positive, a.numel() / 4);  // not a saturated or all-zero result
}

// QuantizeLinear -> DequantizeLinear on x f32[1,3,2,2], with the
// quantization node named "quantize" and its parameters given.
ModelBuilder round_trip(const Tensor& scale, const Tensor& zero_point, std::int64_t axis = 1) {
  ModelBuilder m;
  m.input("x", {1, 3, 2, 2})
      .initializer("s", scale)
      .initializer("z", zero_point)
      .node("QuantizeLinear", {"x", "s", "z"}, {"q"}, {attr("axis", axis)})
      .node("DequantizeLinear", {"q", "s", "z"}, {"y"}, {attr("axis", axis)})
      .output("y");
  m.graph().mutable_node(0)->set_name("quantize");
  m.graph().mutable_node(1)->set_name("dequantize");
  return m;
}

TEST(QuantizedModelTest, ZeroNegativeAndNonFiniteScalesAreRefusedNamingTheNode) {
  for (float bad : {0.0f, -0.5f, std::numeric_limits<float>::quiet_NaN(),
                    std::numeric_limits<float>::infinity()}) {
    const std::string message =
        error_of([&] { testing::import_with_native(round_trip(scalar_f32(bad), scalar_u8(0))); });
    EXPECT_TRUE(contains(message, "'quantize'")) << message;
    EXPECT_TRUE(contains(message, "a scale must be a positive finite number")) << message;
  }
  // One bad value among per-axis scales.
  const std::string message = error_of([&] {
    testing::import_with_native(
        round_trip(values<float>({3}, {0.1f, 0.0f, 0.1f}), values<std::uint8_t>({3}, {0, 0, 0})));
  });
  EXPECT_TRUE(contains(message, "is 0 at 1")) << message;
}

TEST(QuantizedModelTest, AZeroPointOutsideItsTypeOrOfAnotherTypeIsRefused) {
  auto int32_zero_point = [](std::int32_t zero_point) {
    ModelBuilder m;
    m.input("q", {4}, onnx::TensorProto::UINT8)
        .initializer("s", scalar_f32(0.5f))
        .initializer("z", values<std::int32_t>({}, {zero_point}))
        .node("DequantizeLinear", {"q", "s", "z"}, {"y"})
        .output("y");
    m.graph().mutable_node(0)->set_name("dequantize");
    return m;
  };
  std::string message = error_of([&] { testing::import_with_native(int32_zero_point(300)); });
  EXPECT_TRUE(contains(message, "'dequantize'")) << message;
  EXPECT_TRUE(contains(message, "300, outside the range [0, 255]")) << message;
  message = error_of([&] { testing::import_with_native(int32_zero_point(7)); });
  EXPECT_TRUE(contains(message, "the zero point of input 0 is i32, not u8")) << message;
}

TEST(QuantizedModelTest, APerAxisScaleOfTheWrongLengthIsRefused) {
  const std::string message = error_of([&] {
    testing::import_with_native(
        round_trip(values<float>({2}, {0.1f, 0.2f}), values<std::uint8_t>({2}, {0, 0})));
  });
  EXPECT_TRUE(contains(message, "'quantize'")) << message;
  EXPECT_TRUE(contains(message, "has 2 values, not 1 or the 3 of its axis 1")) << message;
  // Zero points and scales of different lengths.
  const std::string mismatch = error_of([&] {
    testing::import_with_native(
        round_trip(values<float>({3}, {0.1f, 0.2f, 0.3f}), values<std::uint8_t>({2}, {0, 0})));
  });
  EXPECT_TRUE(contains(mismatch, "has 2 values and its scale 3")) << mismatch;
}

}  // namespace
}  // namespace collage
