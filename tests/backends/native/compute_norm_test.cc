// BatchNormalization, LayerNormalization, InstanceNormalization, LRN, Softmax
// and LogSoftmax against direct formulas evaluated in double.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/native/compute_op_harness.h"

namespace collage::native_test {
namespace {

TEST(BatchNormalizationTest, NormalizesEachChannelWithItsStatistics) {
  const Tensor x = random_tensor({2, 3, 4, 5}, 71);
  const Tensor scale = random_tensor({3}, 72);
  const Tensor bias = random_tensor({3}, 73);
  const Tensor mean = random_tensor({3}, 74);
  const Tensor var = random_tensor({3}, 75, 0.1f, 2.0f);
  Attributes attributes;
  attributes.set("epsilon", 1e-3f);
  ComputeCase c{
      "BatchNormalization", {x, scale, bias, mean, var}, {f32_type({2, 3, 4, 5})}, attributes, 15};
  c.threads = 2;
  std::vector<float> expected;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const std::int64_t ch = i / 20 % 3;
    const double normalized = (x.data<float>()[i] - mean.data<float>()[ch]) /
                              std::sqrt(static_cast<double>(var.data<float>()[ch]) + 1e-3);
    expected.push_back(
        static_cast<float>(normalized * scale.data<float>()[ch] + bias.data<float>()[ch]));
  }
  expect_close(c.run_one(), expected, 1e-5f);
}

TEST(BatchNormalizationTest, OnnxExampleIsExact) {
  // x = [[[-1, 0, 1]], [[2, 3, 4]]] with scale [1, 1.5], bias [0, 1], mean [0, 3], var [1, 1.5].
  ComputeCase c{"BatchNormalization",
                {f32_tensor({1, 2, 1, 3}, {-1, 0, 1, 2, 3, 4}), f32_tensor({2}, {1.0f, 1.5f}),
                 f32_tensor({2}, {0, 1}), f32_tensor({2}, {0, 3}), f32_tensor({2}, {1.0f, 1.5f})},
                {f32_type({1, 2, 1, 3})},
                {},
                9};
  expect_close(c.run_one(), {-0.999995f, 0.0f, 0.999995f, -0.22474074f, 1.0f, 2.2247407f}, 1e-5f);
}

TEST(BatchNormalizationTest, CheckRejectsTrainingMode) {
  Attributes attributes;
  attributes.set("training_mode", std::int64_t{1});
  const Tensor c3 = random_tensor({3}, 1);
  ComputeCase c{"BatchNormalization",
                {random_tensor({1, 3, 2, 2}, 2), c3, c3, c3, c3},
                {f32_type({1, 3, 2, 2})},
                attributes,
                15};
  EXPECT_FALSE(c.supported());
  ComputeCase extra_outputs{"BatchNormalization",
                            {random_tensor({1, 3, 2, 2}, 2), c3, c3, c3, c3},
                            {f32_type({1, 3, 2, 2}), f32_type({3}), f32_type({3})},
                            {},
                            9};
  EXPECT_FALSE(extra_outputs.supported());
}

// Reference layer norm over the trailing `length` elements of each row.
void expect_layer_norm(const Shape& shape, std::int64_t axis, bool with_bias, int threads) {
  SCOPED_TRACE(::testing::Message() << shape_to_string(shape) << " axis=" << axis);
  const int rank = static_cast<int>(shape.size());
  const std::size_t a = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
  const Shape normalized(shape.begin() + a, shape.end());
  const Tensor x = random_tensor(shape, 81, -3.0f, 3.0f);
  const Tensor scale = random_tensor(normalized, 82);
  const Tensor bias = random_tensor(normalized, 83);
  Shape stats_shape(shape.begin(), shape.begin() + a);
  stats_shape.resize(shape.size(), 1);
  const std::int64_t length = shape_numel(normalized);
  const std::int64_t rows = x.numel() / length;
  std::vector<float> y, means, inv_stds;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = x.data<float>() + r * length;
    double mean = 0.0, var = 0.0;
    for (std::int64_t i = 0; i < length; ++i) mean += row[i];
    mean /= length;
    for (std::int64_t i = 0; i < length; ++i) var += (row[i] - mean) * (row[i] - mean);
    var /= length;
    const double inv_std = 1.0 / std::sqrt(var + 1e-2);
    for (std::int64_t i = 0; i < length; ++i) {
      y.push_back(static_cast<float>((row[i] - mean) * inv_std * scale.data<float>()[i] +
                                     (with_bias ? bias.data<float>()[i] : 0.0f)));
    }
    means.push_back(static_cast<float>(mean));
    inv_stds.push_back(static_cast<float>(inv_std));
  }
  Attributes attributes;
  attributes.set("axis", axis);
  attributes.set("epsilon", 1e-2f);
  ComputeCase c{"LayerNormalization",
                {x, scale},
                {f32_type(shape), f32_type(stats_shape), f32_type(stats_shape)},
                attributes,
                17};
  if (with_bias) c.inputs.push_back(bias);
  c.threads = threads;
  const std::vector<Tensor> outputs = c.run();
  expect_close(outputs[0], y, 1e-5f);
  expect_close(outputs[1], means, 1e-5f);
  expect_close(outputs[2], inv_stds, 1e-5f);
}

TEST(LayerNormalizationTest, EveryAxisMatchesDirectFormula) {
  for (std::int64_t axis : {0, 1, 2, 3, -1, -2}) expect_layer_norm({2, 3, 4, 5}, axis, true, 1);
}

TEST(LayerNormalizationTest, OmittedBiasAndParallelRowsMatchDirectFormula) {
  expect_layer_norm({64, 96}, -1, false, 2);
}

TEST(LayerNormalizationTest, OnlyTheNormalizedOutputCanBeRequested) {
  Attributes attributes;
  attributes.set("epsilon", 0.0f);
  ComputeCase c{"LayerNormalization",
                {f32_tensor({1, 4}, {1, 2, 3, 4}), f32_tensor({4}, {1, 1, 1, 1}),
                 f32_tensor({4}, {0, 0, 0, 10})},
                {f32_type({1, 4})},
                attributes,
                17};
  // mean 2.5, variance 1.25.
  const float s = 1.0f / std::sqrt(1.25f);
  expect_close(c.run_one(), {-1.5f * s, -0.5f * s, 0.5f * s, 1.5f * s + 10.0f}, 1e-6f);
}

TEST(InstanceNormalizationTest, NormalizesEachPlaneWithItsOwnStatistics) {
  const Tensor x = random_tensor({2, 3, 5, 7}, 91);
  const Tensor scale = random_tensor({3}, 92);
  const Tensor bias = random_tensor({3}, 93);
  std::vector<float> expected;
  for (std::int64_t plane = 0; plane < 6; ++plane) {
    const float* v = x.data<float>() + plane * 35;
    double mean = 0.0, var = 0.0;
    for (int i = 0; i < 35; ++i) mean += v[i];
    mean /= 35;
    for (int i = 0; i < 35; ++i) var += (v[i] - mean) * (v[i] - mean);
    var /= 35;
    for (int i = 0; i < 35; ++i) {
      expected.push_back(static_cast<float>((v[i] - mean) / std::sqrt(var + 1e-5) *
                                                scale.data<float>()[plane % 3] +
                                            bias.data<float>()[plane % 3]));
    }
  }
  ComputeCase c{"InstanceNormalization", {x, scale, bias}, {f32_type({2, 3, 5, 7})}};
  c.threads = 2;
  expect_close(c.run_one(), expected, 1e-5f);
}

// An even size: the window is one channel before and two after (ONNX's
// floor and ceil of (size - 1) / 2), clipped at the edges.
TEST(LrnTest, EachElementOverItsChannelWindowsSumOfSquares) {
  const Tensor x = random_tensor({2, 5, 3, 4}, 94);
  const std::int64_t size = 4;
  const double alpha = 0.02, beta = 0.75, bias = 2.0;
  std::vector<float> expected;
  for (std::int64_t n = 0; n < 2; ++n) {
    for (std::int64_t c = 0; c < 5; ++c) {
      for (std::int64_t i = 0; i < 12; ++i) {
        double sum = 0.0;
        for (std::int64_t k = std::max<std::int64_t>(0, c - 1);
             k <= std::min<std::int64_t>(4, c + 2); ++k) {
          const double v = x.data<float>()[(n * 5 + k) * 12 + i];
          sum += v * v;
        }
        const double v = x.data<float>()[(n * 5 + c) * 12 + i];
        expected.push_back(static_cast<float>(v / std::pow(bias + alpha / size * sum, beta)));
      }
    }
  }
  Attributes attributes;
  attributes.set("size", size);
  attributes.set("alpha", static_cast<float>(alpha));
  attributes.set("beta", static_cast<float>(beta));
  attributes.set("bias", static_cast<float>(bias));
  ComputeCase c{"LRN", {x}, {f32_type({2, 5, 3, 4})}, attributes};
  c.threads = 2;
  expect_close(c.run_one(), expected, 1e-5f);
}

// Softmax over [outer, length, inner] in double.
std::vector<float> naive_softmax(const Tensor& x, std::int64_t outer, std::int64_t length,
                                 std::int64_t inner, bool log) {
  std::vector<float> y(static_cast<std::size_t>(x.numel()));
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      auto at = [&](std::int64_t d) { return (o * length + d) * inner + i; };
      double max = -INFINITY, sum = 0.0;
      for (std::int64_t d = 0; d < length; ++d) max = std::max<double>(max, x.data<float>()[at(d)]);
      for (std::int64_t d = 0; d < length; ++d) sum += std::exp(x.data<float>()[at(d)] - max);
      for (std::int64_t d = 0; d < length; ++d) {
        const double shifted = x.data<float>()[at(d)] - max;
        y[at(d)] = static_cast<float>(log ? shifted - std::log(sum) : std::exp(shifted) / sum);
      }
    }
  }
  return y;
}

void expect_softmax(const char* op, const Shape& shape, std::int64_t axis, std::int64_t opset,
                    int threads = 1) {
  SCOPED_TRACE(::testing::Message()
               << op << " " << shape_to_string(shape) << " axis=" << axis << " opset=" << opset);
  const Tensor x = random_tensor(shape, 101, -10.0f, 10.0f);
  const int rank = static_cast<int>(shape.size());
  const std::size_t a = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
  std::int64_t outer = 1, length = 1, inner = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (d < a) outer *= shape[d];
    if (d == a || (opset < 13 && d > a)) length *= shape[d];
    if (d > a && opset >= 13) inner *= shape[d];
  }
  Attributes attributes;
  attributes.set("axis", axis);
  ComputeCase c{op, {x}, {f32_type(shape)}, attributes, opset};
  c.threads = threads;
  expect_close(c.run_one(), naive_softmax(x, outer, length, inner, std::string(op) == "LogSoftmax"),
               2e-6f);
}

TEST(SoftmaxTest, OpsetThirteenRunsAlongOneAxis) {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (std::int64_t axis : {0, 1, 2, -1}) expect_softmax(op, {3, 4, 37}, axis, 13);
  }
}

TEST(SoftmaxTest, BeforeOpsetThirteenTheInputIsFlattenedAtTheAxis) {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (std::int64_t axis : {0, 1, 2, -1}) expect_softmax(op, {3, 4, 5}, axis, 11);
  }
}

TEST(SoftmaxTest, DefaultAxisDependsOnTheOpset) {
  const Tensor x = random_tensor({2, 3, 4}, 111);
  ComputeCase old_default{"Softmax", {x}, {f32_type({2, 3, 4})}, {}, 11};
  expect_close(old_default.run_one(), naive_softmax(x, 2, 12, 1, false), 2e-6f);
  ComputeCase new_default{"Softmax", {x}, {f32_type({2, 3, 4})}, {}, 13};
  expect_close(new_default.run_one(), naive_softmax(x, 6, 4, 1, false), 2e-6f);
}

TEST(SoftmaxTest, LongRowsRunInParallel) {
  expect_softmax("Softmax", {16, 1000}, -1, 13, 2);
  expect_softmax("LogSoftmax", {8, 300, 20}, 1, 13, 2);
}

TEST(SoftmaxTest, LargeInputsDoNotOverflow) {
  ComputeCase c{"Softmax",
                {f32_tensor({2, 4}, {0, 1, 2, 3, 10000, 10001, 10002, 10003})},
                {f32_type({2, 4})}};
  const std::vector<float> row = {0.032058604f, 0.087144318f, 0.23688282f, 0.64391426f};
  std::vector<float> expected = row;
  expected.insert(expected.end(), row.begin(), row.end());
  expect_close(c.run_one(), expected, 1e-6f);
  ComputeCase log{"LogSoftmax", {f32_tensor({1, 3}, {1000, 1001, 1002})}, {f32_type({1, 3})}};
  expect_close(log.run_one(), {-2.40760596f, -1.40760596f, -0.40760596f}, 1e-6f);
}

}  // namespace
}  // namespace collage::native_test
