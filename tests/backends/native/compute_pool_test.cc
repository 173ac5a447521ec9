// MaxPool, AveragePool and the global pools against direct window loops, plus
// exact cases from the ONNX backend tests.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "backends/native/compute_op_harness.h"

namespace collage::native_test {
namespace {

using Ints = std::vector<std::int64_t>;

struct PoolProblem : WindowProblem {
  std::string op = "MaxPool";
  std::int64_t batch = 2, channels = 3;
  bool ceil_mode = false;
  bool count_include_pad = false;
  std::int64_t output(std::size_t i) const {
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      return (input[i] + stride(i) - 1) / stride(i);
    }
    if (auto_pad == "VALID") return (input[i] - extent(i)) / stride(i) + 1;
    const std::int64_t span = input[i] + pad_begin(i) + pad_end(i) - extent(i);
    if (!ceil_mode) return span / stride(i) + 1;
    // With ceil_mode the last window must start inside the input or the
    // leading padding (the rule of PyTorch and of ONNX shape inference).
    const std::int64_t count = (span + stride(i) - 1) / stride(i) + 1;
    return (count - 1) * stride(i) >= input[i] + pad_begin(i) ? count - 1 : count;
  }
  std::int64_t total_same_pad(std::size_t i) const {
    return std::max<std::int64_t>(0, (output(i) - 1) * stride(i) + extent(i) - input[i]);
  }
  std::int64_t pad_begin(std::size_t i) const {
    if (auto_pad == "SAME_UPPER") return total_same_pad(i) / 2;
    if (auto_pad == "SAME_LOWER") return total_same_pad(i) - total_same_pad(i) / 2;
    return pads.empty() || auto_pad == "VALID" ? 0 : pads[i];
  }
  std::int64_t pad_end(std::size_t i) const {
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      return total_same_pad(i) - pad_begin(i);
    }
    return pads.empty() || auto_pad == "VALID" ? 0 : pads[rank() + i];
  }
  Shape input_shape() const {
    Shape shape = {batch, channels};
    shape.insert(shape.end(), input.begin(), input.end());
    return shape;
  }
  Shape output_shape() const {
    Shape shape = {batch, channels};
    for (std::size_t i = 0; i < rank(); ++i) shape.push_back(output(i));
    return shape;
  }
  Attributes attributes() const {
    Attributes a;
    a.set("kernel_shape", kernel);
    if (!strides.empty()) a.set("strides", strides);
    if (!dilations.empty()) a.set("dilations", dilations);
    if (!pads.empty()) a.set("pads", pads);
    if (!auto_pad.empty()) a.set("auto_pad", auto_pad);
    if (ceil_mode) a.set("ceil_mode", std::int64_t{1});
    if (count_include_pad) a.set("count_include_pad", std::int64_t{1});
    return a;
  }
};

// Visits every window position of every output element (1-D or 2-D).
std::vector<float> naive_pool(const PoolProblem& p, const Tensor& x) {
  const bool two_d = p.rank() == 2;
  const std::int64_t in_h = two_d ? p.input[0] : 1, in_w = p.input.back();
  const std::int64_t out_h = two_d ? p.output(0) : 1, out_w = p.output(p.rank() - 1);
  const std::size_t ah = 0, aw = p.rank() - 1;
  std::vector<float> y;
  for (std::int64_t plane = 0; plane < p.batch * p.channels; ++plane) {
    const float* data = x.data<float>() + plane * in_h * in_w;
    for (std::int64_t oh = 0; oh < out_h; ++oh) {
      for (std::int64_t ow = 0; ow < out_w; ++ow) {
        double sum = 0.0;
        float max = -std::numeric_limits<float>::infinity();
        std::int64_t valid = 0, padded = 0;
        const std::int64_t kh_count = two_d ? p.kernel[0] : 1;
        for (std::int64_t kh = 0; kh < kh_count; ++kh) {
          for (std::int64_t kw = 0; kw < p.kernel[aw]; ++kw) {
            const std::int64_t ih =
                two_d ? oh * p.stride(ah) - p.pad_begin(ah) + kh * p.dilation(ah) : 0;
            const std::int64_t iw = ow * p.stride(aw) - p.pad_begin(aw) + kw * p.dilation(aw);
            const bool inside_h = !two_d || (ih >= -p.pad_begin(ah) && ih < in_h + p.pad_end(ah));
            const bool inside_w = iw >= -p.pad_begin(aw) && iw < in_w + p.pad_end(aw);
            if (inside_h && inside_w) ++padded;
            if (ih < 0 || ih >= in_h || iw < 0 || iw >= in_w) continue;
            ++valid;
            const float v = data[ih * in_w + iw];
            sum += v;
            max = std::max(max, v);
          }
        }
        if (p.op == "MaxPool") {
          y.push_back(max);
        } else {
          y.push_back(static_cast<float>(sum / (p.count_include_pad ? padded : valid)));
        }
      }
    }
  }
  return y;
}

void expect_pool_matches_naive(const PoolProblem& p) {
  SCOPED_TRACE(::testing::Message()
               << p.op << " input=" << shape_to_string(p.input) << " kernel="
               << shape_to_string(p.kernel) << " strides=" << shape_to_string(p.strides)
               << " dilations=" << shape_to_string(p.dilations)
               << " pads=" << shape_to_string(p.pads) << " auto_pad=" << p.auto_pad
               << " ceil=" << p.ceil_mode << " include_pad=" << p.count_include_pad);
  const Tensor x = random_tensor(p.input_shape(), 51);
  ComputeCase c{p.op, {x}, {f32_type(p.output_shape())}, p.attributes()};
  c.threads = p.threads;
  expect_close(c.run_one(), naive_pool(p, x), 1e-5f);
}

TEST(PoolTest, TwoDimensionalGridMatchesWindowLoops) {
  const Ints pad_choices[] = {{}, {1, 1, 1, 1}, {0, 1, 1, 0}};
  for (const char* op : {"MaxPool", "AveragePool"}) {
    for (std::int64_t stride : {1, 2, 3}) {
      for (const Ints& pads : pad_choices) {
        for (bool ceil_mode : {false, true}) {
          for (bool include_pad : {false, true}) {
            PoolProblem p;
            p.op = op;
            p.input = {9, 10};
            p.kernel = {3, 2};
            p.strides = {stride, stride};
            p.pads = pads;
            p.ceil_mode = ceil_mode;
            p.count_include_pad = include_pad && p.op == "AveragePool";
            p.threads = 2;
            expect_pool_matches_naive(p);
          }
        }
      }
    }
  }
}

TEST(PoolTest, WideRowsWithStrideTwoMatchWindowLoops) {
  for (const char* op : {"MaxPool", "AveragePool"}) {
    for (std::int64_t pad : {0, 1}) {
      PoolProblem p;
      p.op = op;
      p.input = {5, 41};
      p.kernel = {3, 3};
      p.strides = {2, 2};
      p.pads = {pad, pad, pad, pad};
      expect_pool_matches_naive(p);
    }
  }
}

TEST(PoolTest, DilatedMaxPoolMatchesWindowLoops) {
  for (std::int64_t dilation : {2, 3}) {
    PoolProblem p;
    p.input = {11, 12};
    p.kernel = {3, 3};
    p.strides = {1, 2};
    p.dilations = {dilation, dilation};
    p.pads = {1, 2, 2, 1};
    expect_pool_matches_naive(p);
  }
}

TEST(PoolTest, AutoPadModesMatchWindowLoops) {
  for (const char* op : {"MaxPool", "AveragePool"}) {
    for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
      for (std::int64_t stride : {1, 2}) {
        PoolProblem p;
        p.op = op;
        p.input = {7, 8};
        p.kernel = {2, 3};
        p.strides = {stride, stride};
        p.auto_pad = mode;
        expect_pool_matches_naive(p);
      }
    }
  }
}

TEST(PoolTest, OneDimensionalPoolsMatchWindowLoops) {
  for (const char* op : {"MaxPool", "AveragePool"}) {
    PoolProblem p;
    p.op = op;
    p.input = {23};
    p.kernel = {4};
    p.strides = {3};
    p.pads = {2, 1};
    p.count_include_pad = p.op == "AveragePool";
    expect_pool_matches_naive(p);
  }
}

TEST(PoolTest, ThreeDimensionalMaxPoolTakesTheWindowMaximum) {
  // Values increase along every axis, so each window's maximum is its last
  // in-bounds corner.
  std::vector<float> values(4 * 4 * 4);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  Attributes attributes;
  attributes.set("kernel_shape", Ints{2, 2, 2});
  attributes.set("strides", Ints{2, 2, 2});
  ComputeCase c{
      "MaxPool", {f32_tensor({1, 1, 4, 4, 4}, values)}, {f32_type({1, 1, 2, 2, 2})}, attributes};
  expect_close(c.run_one(), {21, 23, 29, 31, 53, 55, 61, 63}, 0.0f);
}

TEST(PoolTest, ThreeDimensionalAverageCountsPaddingOnlyWhenAsked) {
  // All ones, 2x2x2 windows with stride 2 and one cell of padding per side:
  // per axis, output 0 sees 1 input cell and output 1 sees 2.
  Attributes attributes;
  attributes.set("kernel_shape", Ints{2, 2, 2});
  attributes.set("strides", Ints{2, 2, 2});
  attributes.set("pads", Ints{1, 1, 1, 1, 1, 1});
  const Tensor ones = f32_tensor({1, 1, 3, 3, 3}, std::vector<float>(27, 1.0f));
  ComputeCase excluded{"AveragePool", {ones}, {f32_type({1, 1, 2, 2, 2})}, attributes};
  expect_close(excluded.run_one(), std::vector<float>(8, 1.0f), 0.0f);
  attributes.set("count_include_pad", std::int64_t{1});
  ComputeCase included{"AveragePool", {ones}, {f32_type({1, 1, 2, 2, 2})}, attributes};
  expect_close(included.run_one(),
               {1 / 8.0f, 2 / 8.0f, 2 / 8.0f, 4 / 8.0f, 2 / 8.0f, 4 / 8.0f, 4 / 8.0f, 8 / 8.0f},
               0.0f);
}

std::vector<float> one_to(std::size_t count) {
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<float>(i + 1);
  return values;
}

TEST(PoolTest, OnnxCeilModeCasesAreExact) {
  Attributes attributes;
  attributes.set("kernel_shape", Ints{3, 3});
  attributes.set("strides", Ints{2, 2});
  attributes.set("ceil_mode", std::int64_t{1});
  const Tensor x = f32_tensor({1, 1, 4, 4}, one_to(16));
  ComputeCase max{"MaxPool", {x}, {f32_type({1, 1, 2, 2})}, attributes};
  expect_close(max.run_one(), {11, 12, 15, 16}, 0.0f);
  ComputeCase average{"AveragePool", {x}, {f32_type({1, 1, 2, 2})}, attributes};
  expect_close(average.run_one(), {6, 7.5f, 12, 13.5f}, 1e-6f);
}

TEST(PoolTest, OnnxAveragePoolCountingPaddingIsExact) {
  Attributes attributes;
  attributes.set("kernel_shape", Ints{5, 5});
  attributes.set("pads", Ints{2, 2, 2, 2});
  attributes.set("count_include_pad", std::int64_t{1});
  ComputeCase c{
      "AveragePool", {f32_tensor({1, 1, 5, 5}, one_to(25))}, {f32_type({1, 1, 5, 5})}, attributes};
  expect_close(c.run_one(), {2.52f,  3.6f,  4.8f,  4.08f, 3.24f, 4.56f, 6.4f,  8.4f, 7.04f,
                             5.52f,  7.2f,  10.0f, 13.0f, 10.8f, 8.4f,  6.96f, 9.6f, 12.4f,
                             10.24f, 7.92f, 6.12f, 8.4f,  10.8f, 8.88f, 6.84f},
               1e-6f);
}

// MaxPool's Indices output is int64 and of the values' shape (its values:
// TensorScatterTest); AveragePool has none.
TEST(PoolTest, CheckRejectsIndicesOtherThanMaxPoolsAndIntegerAverages) {
  Attributes attributes;
  attributes.set("kernel_shape", Ints{2, 2});
  const Tensor x = random_tensor({1, 1, 4, 4}, 1);
  ComputeCase with_indices{"MaxPool",
                           {x},
                           {f32_type({1, 1, 3, 3}), TensorType{DType::kInt64, {1, 1, 3, 3}}},
                           attributes};
  EXPECT_TRUE(with_indices.supported());
  ComputeCase narrow_indices{"MaxPool",
                             {x},
                             {f32_type({1, 1, 3, 3}), TensorType{DType::kInt32, {1, 1, 3, 3}}},
                             attributes};
  EXPECT_FALSE(narrow_indices.supported());
  ComputeCase average_indices{"AveragePool",
                              {x},
                              {f32_type({1, 1, 3, 3}), TensorType{DType::kInt64, {1, 1, 3, 3}}},
                              attributes};
  EXPECT_FALSE(average_indices.supported());
  // 8-bit values are pooled by their maximum only (quantized models).
  ComputeCase bytes{"AveragePool",
                    {Tensor::zeros(TensorType{DType::kUInt8, {1, 1, 4, 4}})},
                    {TensorType{DType::kUInt8, {1, 1, 3, 3}}},
                    attributes};
  EXPECT_FALSE(bytes.supported());
  ComputeCase no_kernel{"MaxPool", {x}, {f32_type({1, 1, 3, 3})}};
  EXPECT_FALSE(no_kernel.supported());
}

TEST(GlobalPoolTest, AverageAndMaximumPerChannelMatchDirectLoops) {
  const Tensor x = random_tensor({2, 5, 7, 9}, 61);
  std::vector<float> mean, max;
  for (std::int64_t plane = 0; plane < 10; ++plane) {
    double sum = 0.0;
    float best = -std::numeric_limits<float>::infinity();
    for (std::int64_t i = 0; i < 63; ++i) {
      const float v = x.data<float>()[plane * 63 + i];
      sum += v;
      best = std::max(best, v);
    }
    mean.push_back(static_cast<float>(sum / 63));
    max.push_back(best);
  }
  ComputeCase average{"GlobalAveragePool", {x}, {f32_type({2, 5, 1, 1})}};
  average.threads = 2;
  expect_close(average.run_one(), mean, 1e-5f);
  ComputeCase maximum{"GlobalMaxPool", {x}, {f32_type({2, 5, 1, 1})}};
  expect_close(maximum.run_one(), max, 0.0f);
}

TEST(GlobalPoolTest, OnnxGlobalAveragePoolExampleIsExact) {
  ComputeCase c{
      "GlobalAveragePool", {f32_tensor({1, 1, 3, 3}, one_to(9))}, {f32_type({1, 1, 1, 1})}};
  expect_close(c.run_one(), {5}, 0.0f);
}

}  // namespace
}  // namespace collage::native_test
