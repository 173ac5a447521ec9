// Resize and Upsample: exact cases from the ONNX backend tests, and a grid
// compared with a direct (non-separable) interpolation that sums, for each
// output element, over every combination of per-axis neighbours.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "backends/native/compute_op_harness.h"

namespace collage::native_test {
namespace {

std::vector<float> one_to(std::size_t count) {
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<float>(i + 1);
  return values;
}

Attributes resize_attributes(const std::string& mode, const std::string& coordinates = "",
                             const std::string& nearest = "") {
  Attributes a;
  a.set("mode", mode);
  if (!coordinates.empty()) a.set("coordinate_transformation_mode", coordinates);
  if (!nearest.empty()) a.set("nearest_mode", nearest);
  return a;
}

// Resize with scales (opset 13: X, roi omitted, scales).
ComputeCase by_scales(const Tensor& x, const std::vector<float>& scales, const Shape& out,
                      Attributes attributes) {
  return ComputeCase{"Resize",
                     {x, Tensor(), f32_tensor({static_cast<std::int64_t>(scales.size())}, scales)},
                     {f32_type(out)},
                     std::move(attributes)};
}

// Resize with sizes (opset 13: X, roi and scales omitted, sizes).
ComputeCase by_sizes(const Tensor& x, const Shape& out, Attributes attributes) {
  return ComputeCase{
      "Resize",
      {x, Tensor(), Tensor(), i64_tensor({static_cast<std::int64_t>(out.size())}, out)},
      {f32_type(out)},
      std::move(attributes)};
}

TEST(ResizeTest, OnnxBilinearUpsampleIsExact) {
  ComputeCase c = by_scales(f32_tensor({1, 1, 2, 2}, {1, 2, 3, 4}), {1, 1, 2, 2}, {1, 1, 4, 4},
                            resize_attributes("linear"));
  expect_close(
      c.run_one(),
      {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4},
      1e-6f);
}

TEST(ResizeTest, OnnxAlignCornersUpsampleIsExact) {
  ComputeCase c = by_scales(f32_tensor({1, 1, 2, 2}, {1, 2, 3, 4}), {1, 1, 2, 2}, {1, 1, 4, 4},
                            resize_attributes("linear", "align_corners"));
  expect_close(c.run_one(),
               {1, 1.3333334f, 1.6666666f, 2, 1.6666666f, 2, 2.3333333f, 2.6666667f, 2.3333333f,
                2.6666667f, 3, 3.3333333f, 3, 3.3333333f, 3.6666667f, 4},
               1e-6f);
}

TEST(ResizeTest, DownsampleUsesTheGivenScaleNotTheSizeRatio) {
  ComputeCase c = by_scales(f32_tensor({1, 1, 2, 4}, one_to(8)), {1, 1, 0.6f, 0.6f}, {1, 1, 1, 2},
                            resize_attributes("linear"));
  expect_close(c.run_one(), {2.6666665f, 4.333333f}, 1e-6f);
}

TEST(ResizeTest, AlignCornersWithScalesUsesTheUnroundedResizedLength) {
  // 4 * 0.6 = 2.4 columns: x = 1 * (4 - 1) / (2.4 - 1) = 2.142857.
  ComputeCase c = by_scales(f32_tensor({1, 1, 2, 4}, one_to(8)), {1, 1, 0.6f, 0.6f}, {1, 1, 1, 2},
                            resize_attributes("linear", "align_corners"));
  expect_close(c.run_one(), {1.0f, 3.1428571f}, 1e-6f);
}

TEST(ResizeTest, OnnxNearestModesAreExact) {
  const std::vector<float> expected = {
      1,  2,  2,  3,  3,  4,  4,  4,  5,  6,  6,  7,  7,  8,  8,  8,  5,  6,  6,  7,  7,  8,
      8,  8,  9,  10, 10, 11, 11, 12, 12, 12, 9,  10, 10, 11, 11, 12, 12, 12, 13, 14, 14, 15,
      15, 16, 16, 16, 13, 14, 14, 15, 15, 16, 16, 16, 13, 14, 14, 15, 15, 16, 16, 16};
  const Tensor x = f32_tensor({1, 1, 4, 4}, one_to(16));
  expect_close(
      by_sizes(x, {1, 1, 8, 8}, resize_attributes("nearest", "asymmetric", "round_prefer_ceil"))
          .run_one(),
      expected, 0.0f);
  expect_close(
      by_sizes(x, {1, 1, 8, 8}, resize_attributes("nearest", "half_pixel", "ceil")).run_one(),
      expected, 0.0f);
  expect_close(
      by_sizes(x, {1, 1, 3, 2}, resize_attributes("nearest", "tf_half_pixel_for_nn")).run_one(),
      {6, 8, 10, 12, 14, 16}, 0.0f);
}

TEST(ResizeTest, OnnxPytorchHalfPixelDownsampleIsExact) {
  ComputeCase c = by_sizes(f32_tensor({1, 1, 4, 4}, one_to(16)), {1, 1, 3, 1},
                           resize_attributes("linear", "pytorch_half_pixel"));
  expect_close(c.run_one(), {1.6666666f, 7.0f, 12.333333f}, 1e-6f);
}

TEST(ResizeTest, OnnxCropAndResizeExtrapolatesOutsideTheBox) {
  Attributes attributes = resize_attributes("linear", "tf_crop_and_resize");
  attributes.set("extrapolation_value", 10.0f);
  ComputeCase c{
      "Resize",
      {f32_tensor({1, 1, 4, 4}, one_to(16)), f32_tensor({8}, {0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f}),
       Tensor(), i64_tensor({4}, {1, 1, 3, 3})},
      {f32_type({1, 1, 3, 3})},
      attributes};
  expect_close(c.run_one(), {7.6000004f, 10, 10, 12.400001f, 10, 10, 10, 10, 10}, 1e-5f);
}

TEST(ResizeTest, OnnxBicubicUpsampleIsExact) {
  ComputeCase c = by_scales(f32_tensor({1, 1, 4, 4}, one_to(16)), {1, 1, 2, 2}, {1, 1, 8, 8},
                            resize_attributes("cubic"));
  expect_close(
      c.run_one(),
      {0.47265625f, 0.76953125f, 1.2460938f, 1.875f,     2.28125f,   2.9101562f, 3.3867188f,
       3.6835938f,  1.6601562f,  1.9570312f, 2.4335938f, 3.0625f,    3.46875f,   4.0976562f,
       4.5742188f,  4.8710938f,  3.5664062f, 3.8632812f, 4.3398438f, 4.96875f,   5.375f,
       6.0039062f,  6.4804688f,  6.7773438f, 6.0820312f, 6.3789062f, 6.8554688f, 7.484375f,
       7.890625f,   8.519531f,   8.996094f,  9.292969f,  7.7070312f, 8.003906f,  8.480469f,
       9.109375f,   9.515625f,   10.144531f, 10.621094f, 10.917969f, 10.222656f, 10.519531f,
       10.996094f,  11.625f,     12.03125f,  12.660156f, 13.136719f, 13.433594f, 12.128906f,
       12.425781f,  12.902344f,  13.53125f,  13.9375f,   14.566406f, 15.042969f, 15.339844f,
       13.316406f,  13.613281f,  14.089844f, 14.71875f,  15.125f,    15.753906f, 16.230469f,
       16.527344f},
      1e-5f);
}

TEST(ResizeTest, OnnxBicubicExcludeOutsideIsExact) {
  Attributes attributes = resize_attributes("cubic");
  attributes.set("cubic_coeff_a", -0.5f);
  attributes.set("exclude_outside", std::int64_t{1});
  ComputeCase c =
      by_scales(f32_tensor({1, 1, 4, 4}, one_to(16)), {1, 1, 0.8f, 0.8f}, {1, 1, 3, 3}, attributes);
  expect_close(c.run_one(),
               {1.3681267f, 2.6695013f, 4.0133367f, 6.573625f, 7.875f, 9.218835f, 11.948966f,
                13.250341f, 14.594176f},
               1e-5f);
}

TEST(ResizeTest, OpsetTenTakesScalesSecondAndRoundsNearestDown) {
  ComputeCase c{"Resize",
                {f32_tensor({1, 1, 2, 2}, {1, 2, 3, 4}), f32_tensor({4}, {1, 1, 2, 3})},
                {f32_type({1, 1, 4, 6})},
                resize_attributes("nearest"),
                10};
  expect_close(c.run_one(),
               {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}, 0.0f);
}

TEST(UpsampleTest, OnnxNearestExampleIsExact) {
  ComputeCase c{"Upsample",
                {f32_tensor({1, 1, 2, 2}, {1, 2, 3, 4}), f32_tensor({4}, {1, 1, 2, 3})},
                {f32_type({1, 1, 4, 6})},
                resize_attributes("nearest"),
                9};
  expect_close(c.run_one(),
               {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}, 0.0f);
}

TEST(UpsampleTest, LinearUsesAsymmetricCoordinates) {
  // x = i / 2: output columns sit at 0, 0.5, 1 (clamped), 1.5 (clamped).
  ComputeCase c{"Upsample",
                {f32_tensor({1, 1, 1, 2}, {10, 20}), f32_tensor({4}, {1, 1, 1, 2})},
                {f32_type({1, 1, 1, 4})},
                resize_attributes("linear"),
                9};
  expect_close(c.run_one(), {10, 15, 20, 20}, 0.0f);
}

// --- Grid against a direct interpolation ---

struct Tap {
  std::int64_t index;
  double weight;
};

double coordinate(const std::string& mode, std::int64_t i, std::int64_t in, std::int64_t out,
                  double scale) {
  if (mode == "half_pixel") return (i + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel") return out > 1 ? (i + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners") return out == 1 ? 0.0 : i * (in - 1.0) / (out - 1.0);
  if (mode == "asymmetric") return i / scale;
  return (i + 0.5) / scale;  // tf_half_pixel_for_nn
}

// The neighbours of output position i along one axis, with edge clamping.
std::vector<Tap> taps(const std::string& mode, const std::string& coordinates,
                      const std::string& nearest, std::int64_t i, std::int64_t in, std::int64_t out,
                      double scale) {
  const double x = coordinate(coordinates, i, in, out, scale);
  auto clamp = [in](std::int64_t v) {
    return std::min<std::int64_t>(std::max<std::int64_t>(v, 0), in - 1);
  };
  if (mode == "nearest") {
    std::int64_t v;
    const double f = std::floor(x);
    if (nearest == "floor") {
      v = static_cast<std::int64_t>(f);
    } else if (nearest == "ceil") {
      v = static_cast<std::int64_t>(std::ceil(x));
    } else if (x - f == 0.5) {
      v = static_cast<std::int64_t>(nearest == "round_prefer_ceil" ? f + 1 : f);
    } else {
      v = static_cast<std::int64_t>(std::round(x));
    }
    return {{clamp(v), 1.0}};
  }
  if (mode == "linear") {
    const double xc = std::min(std::max(x, 0.0), in - 1.0);
    const double f = std::floor(xc);
    return {{clamp(static_cast<std::int64_t>(f)), 1.0 - (xc - f)},
            {clamp(static_cast<std::int64_t>(f) + 1), xc - f}};
  }
  const double a = -0.75, f = std::floor(x), t = x - f;
  std::vector<Tap> result;
  for (int k = -1; k <= 2; ++k) {
    const double d = std::fabs(t - k);
    const double w =
        d <= 1 ? ((a + 2) * d - (a + 3)) * d * d + 1 : ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    result.push_back({clamp(static_cast<std::int64_t>(f) + k), w});
  }
  return result;
}

// `scales` as the op sees them: the scales input, or output / input sizes
// in double precision when the op is given sizes (as the ONNX reference does).
std::vector<float> direct_resize(const Tensor& x, const Shape& out,
                                 const std::vector<double>& scales, const std::string& mode,
                                 const std::string& coordinates, const std::string& nearest) {
  const Shape& in = x.shape();
  const std::size_t rank = in.size();
  std::vector<float> y;
  for (std::int64_t o = 0; o < shape_numel(out); ++o) {
    std::vector<std::vector<Tap>> axis_taps(rank);
    for (std::size_t d = rank, rest = static_cast<std::size_t>(o); d-- > 0;) {
      const std::int64_t i = static_cast<std::int64_t>(rest % out[d]);
      rest /= out[d];
      axis_taps[d] = taps(mode, coordinates, nearest, i, in[d], out[d], scales[d]);
    }
    // Sum over every combination of one tap per axis.
    double sum = 0.0;
    std::vector<std::size_t> pick(rank, 0);
    while (true) {
      double weight = 1.0;
      std::int64_t offset = 0;
      for (std::size_t d = 0; d < rank; ++d) {
        weight *= axis_taps[d][pick[d]].weight;
        offset = offset * in[d] + axis_taps[d][pick[d]].index;
      }
      sum += weight * x.data<float>()[offset];
      std::size_t d = rank;
      while (d-- > 0 && ++pick[d] == axis_taps[d].size()) pick[d] = 0;
      if (d == static_cast<std::size_t>(-1)) break;
    }
    y.push_back(static_cast<float>(sum));
  }
  return y;
}

TEST(ResizeTest, ModesAndCoordinateTransformsMatchDirectInterpolation) {
  const Tensor x = random_tensor({2, 3, 5, 7}, 151);
  const Shape outputs[] = {{2, 3, 9, 16}, {2, 3, 3, 4}, {2, 3, 10, 7}};
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    for (const char* coordinates : {"half_pixel", "pytorch_half_pixel", "align_corners",
                                    "asymmetric", "tf_half_pixel_for_nn"}) {
      for (const Shape& out : outputs) {
        SCOPED_TRACE(::testing::Message()
                     << mode << " " << coordinates << " " << shape_to_string(out));
        std::vector<double> scales;
        for (std::size_t d = 0; d < 4; ++d) {
          scales.push_back(static_cast<double>(out[d]) / static_cast<double>(x.shape()[d]));
        }
        ComputeCase c =
            by_sizes(x, out, resize_attributes(mode, coordinates, "round_prefer_floor"));
        c.threads = 2;
        expect_close(c.run_one(),
                     direct_resize(x, out, scales, mode, coordinates, "round_prefer_floor"), 1e-5f);
      }
    }
  }
}

TEST(ResizeTest, EveryNearestModeMatchesDirectInterpolation) {
  const Tensor x = random_tensor({1, 2, 6, 5}, 161);
  const std::vector<float> scales = {1.0f, 1.0f, 1.5f, 2.5f};
  const Shape out = {1, 2, 9, 12};
  for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
    SCOPED_TRACE(nearest);
    ComputeCase c = by_scales(x, scales, out, resize_attributes("nearest", "asymmetric", nearest));
    expect_close(
        c.run_one(),
        direct_resize(x, out, {scales.begin(), scales.end()}, "nearest", "asymmetric", nearest),
        0.0f);
  }
}

TEST(ResizeTest, LinearResizeOfEveryAxisMatchesDirectInterpolation) {
  const Tensor x = random_tensor({3, 4, 5}, 171);
  const Shape out = {5, 2, 8};
  const std::vector<float> scales = {5.0f / 3, 0.5f, 1.6f};
  ComputeCase c = by_scales(x, scales, out, resize_attributes("linear", "half_pixel"));
  expect_close(c.run_one(),
               direct_resize(x, out, {scales.begin(), scales.end()}, "linear", "half_pixel", ""),
               1e-5f);
}

TEST(ResizeTest, IdentityScalesCopyTheInput) {
  const Tensor x = random_tensor({1, 3, 4, 4}, 181);
  ComputeCase c = by_scales(x, {1, 1, 1, 1}, {1, 3, 4, 4}, resize_attributes("cubic"));
  expect_close(c.run_one(), values_of(x), 0.0f);
}

TEST(ResizeTest, CheckRejectsWhatIsNotImplemented) {
  const Tensor x = random_tensor({1, 1, 2, 2}, 1);
  ComputeCase antialias = by_scales(x, {1, 1, 2, 2}, {1, 1, 4, 4}, resize_attributes("linear"));
  antialias.attributes.set("antialias", std::int64_t{1});
  EXPECT_FALSE(antialias.supported());
  ComputeCase symmetric =
      by_scales(x, {1, 1, 2, 2}, {1, 1, 4, 4}, resize_attributes("linear", "half_pixel_symmetric"));
  EXPECT_FALSE(symmetric.supported());
  ComputeCase no_target{"Resize", {x}, {f32_type({1, 1, 4, 4})}, resize_attributes("linear")};
  EXPECT_FALSE(no_target.supported());
  ComputeCase cubic_upsample{"Upsample",
                             {x, f32_tensor({4}, {1, 1, 2, 2})},
                             {f32_type({1, 1, 4, 4})},
                             resize_attributes("cubic"),
                             9};
  EXPECT_FALSE(cubic_upsample.supported());
}

}  // namespace
}  // namespace collage::native_test
