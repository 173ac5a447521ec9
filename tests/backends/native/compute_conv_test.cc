// Conv and ConvTranspose against direct loops over a grid of shapes and
// attributes, plus exact cases from the ONNX operator documentation.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "backends/native/compute_op_harness.h"
#include "collage/backends/native/conv_taps.h"

namespace collage::native_test {
namespace {

using Ints = std::vector<std::int64_t>;
using native::conv_by_taps_fits;
using native::ConvShape;

// A convolution problem with up to 3 spatial axes.
struct ConvProblem : WindowProblem {
  std::int64_t batch = 1, channels = 1, out_channels = 1, group = 1;
  bool bias = true;

  // Output size and leading pad per axis, computed the way the ONNX spec words it.
  std::int64_t output(std::size_t i) const {
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      return (input[i] + stride(i) - 1) / stride(i);
    }
    if (auto_pad == "VALID") return (input[i] - extent(i)) / stride(i) + 1;
    const std::int64_t total = pads.empty() ? 0 : pads[i] + pads[rank() + i];
    return (input[i] + total - extent(i)) / stride(i) + 1;
  }
  std::int64_t pad_begin(std::size_t i) const {
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const std::int64_t needed = (output(i) - 1) * stride(i) + extent(i) - input[i];
      const std::int64_t total = std::max<std::int64_t>(0, needed);
      return auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    }
    if (auto_pad == "VALID" || pads.empty()) return 0;
    return pads[i];
  }

  Attributes attributes() const {
    Attributes a;
    if (!strides.empty()) a.set("strides", strides);
    if (!dilations.empty()) a.set("dilations", dilations);
    if (!pads.empty()) a.set("pads", pads);
    if (!auto_pad.empty()) a.set("auto_pad", auto_pad);
    if (group != 1) a.set("group", group);
    return a;
  }
};

// Pads a problem's spatial lists to three axes (leading trivial axes).
std::array<std::int64_t, 3> to3(const Ints& values, std::int64_t fill) {
  std::array<std::int64_t, 3> result{fill, fill, fill};
  std::copy(values.begin(), values.end(), result.begin() + (3 - values.size()));
  return result;
}

Shape with_prefix(std::int64_t a, std::int64_t b, const Ints& spatial) {
  Shape shape = {a, b};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  return shape;
}

// The textbook seven-loop convolution (three spatial loops, taps, channels).
std::vector<float> naive_conv(const ConvProblem& p, const Tensor& x, const Tensor& w,
                              const Tensor* bias) {
  Ints out_spatial, pad, stride, dilation;
  for (std::size_t i = 0; i < p.rank(); ++i) {
    out_spatial.push_back(p.output(i));
    pad.push_back(p.pad_begin(i));
    stride.push_back(p.stride(i));
    dilation.push_back(p.dilation(i));
  }
  const auto in = to3(p.input, 1), out = to3(out_spatial, 1), k = to3(p.kernel, 1);
  const auto pb = to3(pad, 0), s = to3(stride, 1), d = to3(dilation, 1);
  const std::int64_t cg = p.channels / p.group, mg = p.out_channels / p.group;
  std::vector<float> y;
  for (std::int64_t n = 0; n < p.batch; ++n) {
    for (std::int64_t m = 0; m < p.out_channels; ++m) {
      const std::int64_t g = m / mg;
      for (std::int64_t o0 = 0; o0 < out[0]; ++o0) {
        for (std::int64_t o1 = 0; o1 < out[1]; ++o1) {
          for (std::int64_t o2 = 0; o2 < out[2]; ++o2) {
            double sum = bias != nullptr ? bias->data<float>()[m] : 0.0;
            for (std::int64_t c = 0; c < cg; ++c) {
              for (std::int64_t k0 = 0; k0 < k[0]; ++k0) {
                for (std::int64_t k1 = 0; k1 < k[1]; ++k1) {
                  for (std::int64_t k2 = 0; k2 < k[2]; ++k2) {
                    const std::int64_t i0 = o0 * s[0] - pb[0] + k0 * d[0];
                    const std::int64_t i1 = o1 * s[1] - pb[1] + k1 * d[1];
                    const std::int64_t i2 = o2 * s[2] - pb[2] + k2 * d[2];
                    if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) {
                      continue;
                    }
                    const std::int64_t xi =
                        (((n * p.channels + g * cg + c) * in[0] + i0) * in[1] + i1) * in[2] + i2;
                    const std::int64_t wi = (((m * cg + c) * k[0] + k0) * k[1] + k1) * k[2] + k2;
                    sum += static_cast<double>(x.data<float>()[xi]) * w.data<float>()[wi];
                  }
                }
              }
            }
            y.push_back(static_cast<float>(sum));
          }
        }
      }
    }
  }
  return y;
}

void expect_conv_matches_naive(const ConvProblem& p, float tolerance = 1e-4f) {
  SCOPED_TRACE(::testing::Message()
               << "C=" << p.channels << " M=" << p.out_channels << " group=" << p.group
               << " input=" << shape_to_string(p.input) << " kernel=" << shape_to_string(p.kernel)
               << " strides=" << shape_to_string(p.strides) << " dilations="
               << shape_to_string(p.dilations) << " pads=" << shape_to_string(p.pads)
               << " auto_pad=" << p.auto_pad << " threads=" << p.threads);
  const Tensor x = random_tensor(with_prefix(p.batch, p.channels, p.input), 11);
  const Tensor w = random_tensor(with_prefix(p.out_channels, p.channels / p.group, p.kernel), 12);
  const Tensor b = random_tensor({p.out_channels}, 13);
  Ints out_spatial;
  for (std::size_t i = 0; i < p.rank(); ++i) out_spatial.push_back(p.output(i));
  ComputeCase c{"Conv",
                {x, w},
                {f32_type(with_prefix(p.batch, p.out_channels, out_spatial))},
                p.attributes()};
  if (p.bias) c.inputs.push_back(b);
  c.threads = p.threads;
  expect_close(c.run_one(), naive_conv(p, x, w, p.bias ? &b : nullptr), tolerance);
}

TEST(ConvTest, TwoDimensionalGridMatchesDirectLoops) {
  const Ints pad_choices[] = {{}, {1, 1, 1, 1}, {0, 1, 2, 1}};
  const Ints kernels[] = {{1, 1}, {3, 3}, {2, 3}};
  for (std::int64_t stride : {1, 2}) {
    for (std::int64_t dilation : {1, 2}) {
      for (const Ints& pads : pad_choices) {
        for (std::int64_t group : {1, 2}) {
          for (const Ints& kernel : kernels) {
            // Few outputs per group take the direct path, many the GEMM.
            for (std::int64_t out_channels : {6, 20}) {
              ConvProblem p;
              p.batch = 2;
              p.channels = 4;
              p.out_channels = out_channels;
              p.group = group;
              p.input = {7, 9};
              p.kernel = kernel;
              p.strides = {stride, stride};
              p.dilations = {dilation, dilation};
              p.pads = pads;
              expect_conv_matches_naive(p);
            }
          }
        }
      }
    }
  }
}

TEST(ConvTest, WideRowsWithStrideTwoMatchDirectLoops) {
  // Rows long enough for the vectorized even/odd split of the padded copy,
  // with both parities of leading padding.
  for (std::int64_t pad : {0, 1, 2}) {
    ConvProblem p;
    p.channels = 3;
    p.out_channels = 3;
    p.group = 3;
    p.input = {6, 45};
    p.kernel = {3, 3};
    p.strides = {2, 2};
    p.pads = {pad, pad, pad, pad};
    expect_conv_matches_naive(p);
  }
}

TEST(ConvTest, SmallGroupsTakeTheDirectPathAndMatchDirectLoops) {
  // ResNeXt-like: 4 input and 4 output channels per group.
  ConvProblem p;
  p.channels = 32;
  p.out_channels = 32;
  p.group = 8;
  p.input = {13, 14};
  p.kernel = {3, 3};
  p.strides = {2, 2};
  p.pads = {1, 1, 1, 1};
  p.threads = 2;
  expect_conv_matches_naive(p);
}

TEST(ConvTest, DepthwiseGridMatchesDirectLoops) {
  for (std::int64_t multiplier : {1, 2}) {
    for (std::int64_t stride : {1, 2}) {
      for (std::int64_t dilation : {1, 2}) {
        for (std::int64_t kernel : {3, 5}) {
          ConvProblem p;
          p.channels = 8;
          p.out_channels = 8 * multiplier;
          p.group = 8;
          p.input = {11, 10};
          p.kernel = {kernel, kernel};
          p.strides = {stride, stride};
          p.dilations = {dilation, dilation};
          p.pads = {kernel / 2, kernel / 2, kernel / 2 + 1, kernel / 2};
          p.threads = 2;
          expect_conv_matches_naive(p);
        }
      }
    }
  }
}

TEST(ConvTest, AutoPadModesMatchDirectLoops) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET"}) {
    for (std::int64_t stride : {1, 2, 3}) {
      for (std::int64_t kernel : {2, 3, 4}) {
        for (std::int64_t out_channels : {5, 12}) {
          ConvProblem p;
          p.channels = 3;
          p.out_channels = out_channels;
          p.input = {8, 7};
          p.kernel = {kernel, kernel};
          p.strides = {stride, stride};
          p.auto_pad = mode;
          expect_conv_matches_naive(p);
        }
      }
    }
  }
}

TEST(ConvTest, OneDimensionalConvMatchesDirectLoops) {
  for (std::int64_t group : {1, 3, 6}) {
    ConvProblem p;
    p.batch = 2;
    p.channels = 6;
    p.out_channels = 12;
    p.group = group;
    p.input = {29};
    p.kernel = {5};
    p.strides = {2};
    p.dilations = {3};
    p.pads = {4, 1};
    expect_conv_matches_naive(p);
  }
}

TEST(ConvTest, ThreeDimensionalConvMatchesDirectLoops) {
  ConvProblem p;
  p.channels = 4;
  p.out_channels = 6;
  p.group = 2;
  p.input = {5, 6, 7};
  p.kernel = {3, 2, 3};
  p.strides = {1, 2, 1};
  p.dilations = {1, 1, 2};
  p.pads = {1, 0, 2, 1, 1, 0};
  expect_conv_matches_naive(p);
}

TEST(ConvTest, DeepInputSpansSeveralGemmBlocksInParallel) {
  // k = 64 * 9 = 576 runs over several k blocks of the GEMM.
  ConvProblem p;
  p.channels = 64;
  p.out_channels = 40;
  p.input = {10, 12};
  p.kernel = {3, 3};
  p.pads = {1, 1, 1, 1};
  p.threads = 2;
  expect_conv_matches_naive(p);
}

TEST(ConvTest, WinogradTilesMatchDirectLoops) {
  // 3x3 convolutions of stride 1 with 16 channels or more run on Winograd
  // F(4x4, 3x3): outputs that end inside a tile, rows of eight whole tiles
  // (stored together) and not, asymmetric padding, batches, no bias.
  const Ints pad_choices[] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 0, 1, 2}};
  const Ints inputs[] = {{17, 23}, {16, 16}, {36, 41}};
  for (const Ints& pads : pad_choices) {
    for (const Ints& input : inputs) {
      for (int threads : {1, 2}) {
        ConvProblem p;
        p.batch = 2;
        p.channels = 16;
        p.out_channels = 20;
        p.input = input;
        p.kernel = {3, 3};
        p.pads = pads;
        p.bias = threads == 1;
        p.threads = threads;
        expect_conv_matches_naive(p);
      }
    }
  }
}

TEST(ConvTest, WinogradOverSeveralChunksOfTilesMatchesDirectLoops) {
  // 25 x 25 tiles, more than one chunk holds; channels past a GEMM block.
  // Winograd's rounding error grows with the channels summed (about 5e-6
  // of the output's range here, 1e-4 of an output of 1).
  ConvProblem p;
  p.channels = 24;
  p.out_channels = 300;
  p.input = {100, 100};
  p.kernel = {3, 3};
  p.pads = {1, 1, 1, 1};
  p.threads = 2;
  expect_conv_matches_naive(p, 3e-4f);
}

TEST(ConvTest, DilatedConvsWhoseTapsMostlyReadPaddingRunByTapsAndMatchDirectLoops) {
  // ASPP-like: dilation 6 on 7x7 with "same" padding, where the off-centre
  // taps reach the input for one row or column of outputs (the centre tap
  // reads the whole image in place), and strided, uneven and asymmetric
  // cases whose boxes are neither whole rows nor whole images; batches,
  // one and two threads, with and without a bias.
  struct Case {
    Ints input, pads, strides, dilations;
  };
  const Case cases[] = {
      {{7, 7}, {6, 6, 6, 6}, {1, 1}, {6, 6}},
      {{7, 9}, {6, 8, 6, 8}, {1, 1}, {6, 8}},
      {{9, 8}, {10, 3, 4, 9}, {2, 3}, {5, 6}},
      {{5, 11}, {4, 0, 4, 0}, {1, 1}, {4, 1}},
  };
  for (const Case& c : cases) {
    for (int threads : {1, 2}) {
      ConvProblem p;
      p.batch = 2;
      p.channels = 19;
      p.out_channels = 13;
      p.input = c.input;
      p.kernel = {3, 3};
      p.pads = c.pads;
      p.strides = c.strides;
      p.dilations = c.dilations;
      p.bias = threads == 1;
      p.threads = threads;
      ConvShape shape;
      shape.batch = p.batch;
      shape.channels = p.channels;
      shape.out_channels = p.out_channels;
      for (std::size_t a = 0; a < 2; ++a) {
        WindowAxis& axis = shape.window[a + 1];
        axis.input = p.input[a];
        axis.output = p.output(a);
        axis.kernel = 3;
        axis.stride = p.stride(a);
        axis.dilation = p.dilations[a];
        axis.pad_begin = p.pads[a];
        axis.pad_end = p.pads[a + 2];
      }
      ASSERT_TRUE(conv_by_taps_fits(shape)) << "case " << (&c - cases);
      expect_conv_matches_naive(p);
    }
  }
}

TEST(ConvTest, ConvsWhoseTapsMostlyReadTheInputDoNotRunByTaps) {
  ConvShape shape;
  shape.batch = 1;
  shape.channels = 8;
  shape.out_channels = 8;
  for (std::size_t a = 1; a < 3; ++a) {
    shape.window[a] = WindowAxis{14, 14, 3, 1, 1, 1, 1};
  }
  EXPECT_FALSE(conv_by_taps_fits(shape));
  // Dilation 2 on 14x14 still reads the input through every tap for most outputs.
  for (std::size_t a = 1; a < 3; ++a) shape.window[a] = WindowAxis{14, 14, 3, 1, 2, 2, 2};
  EXPECT_FALSE(conv_by_taps_fits(shape));
  // Grouped convolutions keep their own strategies.
  for (std::size_t a = 1; a < 3; ++a) shape.window[a] = WindowAxis{7, 7, 3, 1, 6, 6, 6};
  EXPECT_TRUE(conv_by_taps_fits(shape));
  shape.groups = 2;
  EXPECT_FALSE(conv_by_taps_fits(shape));
}

TEST(ConvTest, PointwiseConvWithoutBiasMatchesDirectLoops) {
  for (int threads : {1, 2}) {
    ConvProblem p;
    p.batch = 3;
    p.channels = 16;
    p.out_channels = 24;
    p.input = {9, 13};
    p.kernel = {1, 1};
    p.bias = false;
    p.threads = threads;
    expect_conv_matches_naive(p);
  }
}

TEST(ConvTest, ManyGroupsRunInParallelAcrossGroups) {
  ConvProblem p;
  p.batch = 2;
  p.channels = 32;
  p.out_channels = 64;
  p.group = 8;
  p.input = {9, 9};
  p.kernel = {3, 3};
  p.pads = {1, 1, 1, 1};
  p.threads = 2;
  expect_conv_matches_naive(p);
}

TEST(ConvTest, SingleInputChannelWithManyOutputsUsesGemm) {
  ConvProblem p;
  p.channels = 1;
  p.out_channels = 16;
  p.input = {12, 12};
  p.kernel = {3, 3};
  p.strides = {2, 2};
  p.pads = {1, 1, 1, 1};
  expect_conv_matches_naive(p);
}

std::vector<float> iota_values(std::size_t count) {
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<float>(i);
  return values;
}

TEST(ConvTest, OnnxBasicConvWithPaddingIsExact) {
  Attributes attributes;
  attributes.set("kernel_shape", Ints{3, 3});
  attributes.set("pads", Ints{1, 1, 1, 1});
  ComputeCase c{"Conv",
                {f32_tensor({1, 1, 5, 5}, iota_values(25)),
                 f32_tensor({1, 1, 3, 3}, std::vector<float>(9, 1.0f))},
                {f32_type({1, 1, 5, 5})},
                attributes};
  expect_close(c.run_one(), {12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                             117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84},
               0.0f);
}

TEST(ConvTest, OnnxConvWithStridesAndAsymmetricPaddingIsExact) {
  Attributes attributes;
  attributes.set("kernel_shape", Ints{3, 3});
  attributes.set("pads", Ints{1, 0, 1, 0});
  attributes.set("strides", Ints{2, 2});
  ComputeCase c{"Conv",
                {f32_tensor({1, 1, 7, 5}, iota_values(35)),
                 f32_tensor({1, 1, 3, 3}, std::vector<float>(9, 1.0f))},
                {f32_type({1, 1, 4, 2})},
                attributes};
  expect_close(c.run_one(), {21, 33, 99, 117, 189, 207, 171, 183}, 0.0f);
}

TEST(ConvTest, CheckRejectsWhatTheKernelDoesNotImplement) {
  const Tensor x = random_tensor({1, 2, 5, 5}, 1);
  const Tensor w = random_tensor({4, 2, 3, 3}, 2);
  ComputeCase good{"Conv", {x, w}, {f32_type({1, 4, 3, 3})}};
  EXPECT_TRUE(good.supported());

  ComputeCase wrong_kernel = good;
  wrong_kernel.attributes.set("kernel_shape", Ints{2, 2});
  EXPECT_FALSE(wrong_kernel.supported());

  ComputeCase bad_pad = good;
  bad_pad.attributes.set("auto_pad", std::string("SAME"));
  EXPECT_FALSE(bad_pad.supported());

  ComputeCase bad_group = good;
  bad_group.attributes.set("group", std::int64_t{3});
  EXPECT_FALSE(bad_group.supported());

  ComputeCase integer = good;
  integer.inputs[0] = Tensor::zeros(TensorType{DType::kInt32, {1, 2, 5, 5}});
  EXPECT_FALSE(integer.supported());
}

TEST(ConvTest, MismatchedOutputShapeIsAnError) {
  ComputeCase c{"Conv",
                {random_tensor({1, 2, 5, 5}, 1), random_tensor({4, 2, 3, 3}, 2)},
                {f32_type({1, 4, 4, 4})}};
  EXPECT_THROW(c.run(), Error);
}

// --- ConvTranspose ---

struct TransposeProblem {
  std::int64_t batch = 1, channels = 2, out_channels = 2, group = 1;
  Ints input, kernel, strides, dilations, pads, output_padding, output_shape;
  std::string auto_pad;
  int threads = 1;

  std::size_t rank() const { return input.size(); }
  std::int64_t stride(std::size_t i) const { return strides.empty() ? 1 : strides[i]; }
  std::int64_t dilation(std::size_t i) const { return dilations.empty() ? 1 : dilations[i]; }
  std::int64_t full(std::size_t i) const {
    const std::int64_t extra = output_padding.empty() ? 0 : output_padding[i];
    return stride(i) * (input[i] - 1) + extra + (kernel[i] - 1) * dilation(i) + 1;
  }
  std::int64_t output(std::size_t i) const {
    if (!output_shape.empty()) return output_shape[i];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return input[i] * stride(i);
    if (pads.empty()) return full(i);
    return full(i) - pads[i] - pads[rank() + i];
  }
  std::int64_t pad_begin(std::size_t i) const {
    if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // ONNX: the odd element at the start unless SAME_UPPER; halves round down.
      const std::int64_t total = full(i) - output(i);
      const std::int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
      return auto_pad == "SAME_UPPER" ? half : total - half;
    }
    return pads.empty() ? 0 : pads[i];
  }
  Attributes attributes() const {
    Attributes a;
    if (!strides.empty()) a.set("strides", strides);
    if (!dilations.empty()) a.set("dilations", dilations);
    if (!pads.empty()) a.set("pads", pads);
    if (!output_padding.empty()) a.set("output_padding", output_padding);
    if (!output_shape.empty()) a.set("output_shape", output_shape);
    if (!auto_pad.empty()) a.set("auto_pad", auto_pad);
    if (group != 1) a.set("group", group);
    return a;
  }
};

// Every input element scatters its weighted kernel onto the output.
std::vector<float> naive_conv_transpose(const TransposeProblem& p, const Tensor& x, const Tensor& w,
                                        const Tensor& bias) {
  Ints out_spatial, pad, stride, dilation;
  for (std::size_t i = 0; i < p.rank(); ++i) {
    out_spatial.push_back(p.output(i));
    pad.push_back(p.pad_begin(i));
    stride.push_back(p.stride(i));
    dilation.push_back(p.dilation(i));
  }
  const auto in = to3(p.input, 1), out = to3(out_spatial, 1), k = to3(p.kernel, 1);
  const auto pb = to3(pad, 0), s = to3(stride, 1), d = to3(dilation, 1);
  const std::int64_t cg = p.channels / p.group, mg = p.out_channels / p.group;
  const std::int64_t plane = out[0] * out[1] * out[2];
  std::vector<double> y(static_cast<std::size_t>(p.batch * p.out_channels * plane));
  for (std::int64_t n = 0; n < p.batch; ++n) {
    for (std::int64_t m = 0; m < p.out_channels; ++m) {
      for (std::int64_t i = 0; i < plane; ++i)
        y[(n * p.out_channels + m) * plane + i] = bias.data<float>()[m];
    }
    for (std::int64_t c = 0; c < p.channels; ++c) {
      const std::int64_t g = c / cg;
      for (std::int64_t i0 = 0; i0 < in[0]; ++i0) {
        for (std::int64_t i1 = 0; i1 < in[1]; ++i1) {
          for (std::int64_t i2 = 0; i2 < in[2]; ++i2) {
            const float xv =
                x.data<float>()[(((n * p.channels + c) * in[0] + i0) * in[1] + i1) * in[2] + i2];
            for (std::int64_t mm = 0; mm < mg; ++mm) {
              const std::int64_t m = g * mg + mm;
              for (std::int64_t k0 = 0; k0 < k[0]; ++k0) {
                for (std::int64_t k1 = 0; k1 < k[1]; ++k1) {
                  for (std::int64_t k2 = 0; k2 < k[2]; ++k2) {
                    const std::int64_t o0 = i0 * s[0] - pb[0] + k0 * d[0];
                    const std::int64_t o1 = i1 * s[1] - pb[1] + k1 * d[1];
                    const std::int64_t o2 = i2 * s[2] - pb[2] + k2 * d[2];
                    if (o0 < 0 || o0 >= out[0] || o1 < 0 || o1 >= out[1] || o2 < 0 ||
                        o2 >= out[2]) {
                      continue;
                    }
                    const float wv =
                        w.data<float>()[(((c * mg + mm) * k[0] + k0) * k[1] + k1) * k[2] + k2];
                    y[(n * p.out_channels + m) * plane + (o0 * out[1] + o1) * out[2] + o2] +=
                        static_cast<double>(xv) * wv;
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return std::vector<float>(y.begin(), y.end());
}

void expect_transpose_matches_naive(const TransposeProblem& p) {
  SCOPED_TRACE(::testing::Message()
               << "C=" << p.channels << " M=" << p.out_channels << " group=" << p.group
               << " input=" << shape_to_string(p.input) << " kernel=" << shape_to_string(p.kernel)
               << " strides=" << shape_to_string(p.strides) << " dilations="
               << shape_to_string(p.dilations) << " pads=" << shape_to_string(p.pads)
               << " output_padding=" << shape_to_string(p.output_padding) << " output_shape="
               << shape_to_string(p.output_shape) << " auto_pad=" << p.auto_pad);
  const Tensor x = random_tensor(with_prefix(p.batch, p.channels, p.input), 21);
  const Tensor w = random_tensor(with_prefix(p.channels, p.out_channels / p.group, p.kernel), 22);
  const Tensor b = random_tensor({p.out_channels}, 23);
  Ints out_spatial;
  for (std::size_t i = 0; i < p.rank(); ++i) out_spatial.push_back(p.output(i));
  ComputeCase c{"ConvTranspose",
                {x, w, b},
                {f32_type(with_prefix(p.batch, p.out_channels, out_spatial))},
                p.attributes()};
  c.threads = p.threads;
  expect_close(c.run_one(), naive_conv_transpose(p, x, w, b), 1e-4f);
}

TEST(ConvTransposeTest, TwoDimensionalGridMatchesScatterLoops) {
  const Ints pad_choices[] = {{}, {1, 1, 1, 1}, {0, 1, 1, 0}};
  for (std::int64_t stride : {1, 2, 3}) {
    for (std::int64_t dilation : {1, 2}) {
      for (const Ints& pads : pad_choices) {
        for (std::int64_t group : {1, 2}) {
          TransposeProblem p;
          p.batch = 2;
          p.channels = 4;
          p.out_channels = 6;
          p.group = group;
          p.input = {5, 4};
          p.kernel = {3, 2};
          p.strides = {stride, stride};
          p.dilations = {dilation, dilation};
          p.pads = pads;
          if (stride > 1) p.output_padding = {1, 0};
          p.threads = 2;
          expect_transpose_matches_naive(p);
        }
      }
    }
  }
}

TEST(ConvTransposeTest, OutputShapeAndAutoPadDeriveThePadding) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    TransposeProblem p;
    p.input = {3, 4};
    p.kernel = {3, 3};
    p.strides = {2, 2};
    p.auto_pad = mode;
    expect_transpose_matches_naive(p);
  }
  TransposeProblem shaped;
  shaped.input = {3, 3};
  shaped.kernel = {3, 3};
  shaped.strides = {3, 2};
  shaped.output_shape = {10, 8};
  expect_transpose_matches_naive(shaped);
}

TEST(ConvTransposeTest, OneAndThreeDimensionalCasesMatchScatterLoops) {
  TransposeProblem one;
  one.channels = 3;
  one.out_channels = 4;
  one.input = {7};
  one.kernel = {4};
  one.strides = {3};
  one.pads = {1, 2};
  expect_transpose_matches_naive(one);

  TransposeProblem three;
  three.input = {3, 4, 2};
  three.kernel = {2, 3, 3};
  three.strides = {2, 1, 2};
  three.pads = {0, 1, 1, 1, 0, 1};
  expect_transpose_matches_naive(three);
}

TEST(ConvTransposeTest, OnnxDocumentationExampleIsExact) {
  const std::vector<float> channel = {0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                                      27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8};
  std::vector<float> expected = channel;
  expected.insert(expected.end(), channel.begin(), channel.end());
  ComputeCase c{"ConvTranspose",
                {f32_tensor({1, 1, 3, 3}, iota_values(9)),
                 f32_tensor({1, 2, 3, 3}, std::vector<float>(18, 1.0f))},
                {f32_type({1, 2, 5, 5})}};
  expect_close(c.run_one(), expected, 0.0f);
}

}  // namespace
}  // namespace collage::native_test
