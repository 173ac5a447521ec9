#include "collage/backends/native/conv_taps.h"

#include <algorithm>
#include <cstdint>

#include "collage/backends/native/sgemm.h"
#include "collage/ir/window.h"

namespace collage::native {
namespace {

thread_local ScratchBuffer gathered_buffer;
thread_local ScratchBuffer product_buffer;

}  // namespace

bool conv_by_taps_fits(const ConvShape& shape) {
  const WindowAxis& ad = shape.window[0];
  if (ad.input != 1 || ad.output != 1 || ad.kernel != 1 || shape.groups != 1) return false;
  const WindowAxis& ah = shape.window[1];
  const WindowAxis& aw = shape.window[2];
  std::int64_t reading = 0;
  for (std::int64_t kh = 0; kh < ah.kernel; ++kh) {
    const std::int64_t rows = ah.outputs_reading_tap(kh).size();
    for (std::int64_t kw = 0; kw < aw.kernel; ++kw)
      reading += rows * aw.outputs_reading_tap(kw).size();
  }
  const std::int64_t pairs = ah.kernel * aw.kernel * ah.output * aw.output;
  return pairs > 0 && 2 * reading <= pairs;
}

bool conv_by_taps_fits(const Graph& graph, const Node& node) {
  if (node.op_type != "Conv" || node.inputs.size() < 2 || node.outputs.size() != 1) return false;
  const Shape& x = graph.type(node.input(0)).shape;
  const Shape& w = graph.type(node.input(1)).shape;
  const Shape& y = graph.type(node.outputs[0]).shape;
  if (x.size() != 4 || w.size() != 4 || y.size() != 4) return false;
  const Result<Window> window =
      forward_window(node, Shape(x.begin() + 2, x.end()), Shape(w.begin() + 2, w.end()));
  if (!window.ok() || window.value().output_shape() != Shape(y.begin() + 2, y.end())) return false;
  ConvShape shape;
  shape.batch = x[0];
  shape.channels = x[1];
  shape.out_channels = y[1];
  shape.groups = node.attributes.get_int("group", 1);
  shape.window = window_3d(window.value());
  return conv_by_taps_fits(shape);
}

namespace {

std::vector<float> repack_by_tap(const float* w, std::int64_t out_channels, std::int64_t channels,
                                 std::int64_t taps) {
  std::vector<float> by_tap(static_cast<std::size_t>(out_channels * channels * taps));
  for (std::int64_t m = 0; m < out_channels; ++m) {
    for (std::int64_t c = 0; c < channels; ++c) {
      const float* from = w + (m * channels + c) * taps;
      for (std::int64_t t = 0; t < taps; ++t) {
        by_tap[static_cast<std::size_t>((t * out_channels + m) * channels + c)] = from[t];
      }
    }
  }
  return by_tap;
}

}  // namespace

std::vector<float> weights_by_tap(const Tensor& weights) {
  const Shape& s = weights.shape();
  return repack_by_tap(weights.data<float>(), s[0], s[1], s[2] * s[3]);
}

void run_conv_by_taps(const ConvShape& shape, const float* x, const float* w, const float* by_tap,
                      const float* bias, float* y, int threads) {
  const WindowAxis& ah = shape.window[1];
  const WindowAxis& aw = shape.window[2];
  const std::int64_t channels = shape.channels;
  const std::int64_t out_channels = shape.out_channels;
  const std::int64_t in_plane = ah.input * aw.input;
  const std::int64_t out_plane = ah.output * aw.output;
  std::vector<float> repacked;
  if (by_tap == nullptr) {
    repacked = repack_by_tap(w, out_channels, channels, ah.kernel * aw.kernel);
    by_tap = repacked.data();
  }
  for (std::int64_t n = 0; n < shape.batch; ++n) {
    const float* image = x + n * channels * in_plane;
    float* out = y + n * out_channels * out_plane;
    // The bias, or zeros, for the taps to add to.
#pragma omp parallel for num_threads(loop_threads(out_channels, out_plane, threads))
    for (std::int64_t m = 0; m < out_channels; ++m) {
      std::fill(out + m * out_plane, out + (m + 1) * out_plane, bias != nullptr ? bias[m] : 0.0f);
    }
    for (std::int64_t kh = 0; kh < ah.kernel; ++kh) {
      const WindowAxis::Run rows = ah.outputs_reading_tap(kh);
      for (std::int64_t kw = 0; kw < aw.kernel; ++kw) {
        const WindowAxis::Run cols = aw.outputs_reading_tap(kw);
        const std::int64_t box = rows.size() * cols.size();
        if (box == 0) continue;
        const SgemmMatrix weights{by_tap + (kh * aw.kernel + kw) * out_channels * channels,
                                  channels, false};
        // A tap that reads the whole input, one position per output, in
        // order: the image itself is the right-hand operand and the sums
        // add into the output where it lies.
        const bool whole = box == out_plane && box == in_plane && ah.stride == 1 &&
                           aw.stride == 1 && ah.input_at(0, kh) == 0 && aw.input_at(0, kw) == 0;
        if (whole) {
          sgemm(out_channels, box, channels, weights, SgemmMatrix{image, in_plane, false},
                SgemmOutput{out, out_plane, 1.0f, 1.0f, nullptr, nullptr}, threads);
          continue;
        }
        // Whole rows of outputs are a run of each output plane: the sums
        // add into it where it lies.
        const bool whole_rows = cols.size() == aw.output;
        float* gathered = gathered_buffer.get(channels * box);
#pragma omp parallel for num_threads(loop_threads(channels, box, threads))
        for (std::int64_t c = 0; c < channels; ++c) {
          const float* plane = image + c * in_plane;
          float* to = gathered + c * box;
          for (std::int64_t oh = rows.first; oh < rows.last; ++oh) {
            const float* row = plane + ah.input_at(oh, kh) * aw.input;
            for (std::int64_t ow = cols.first; ow < cols.last; ++ow)
              *to++ = row[aw.input_at(ow, kw)];
          }
        }
        if (whole_rows) {
          sgemm(out_channels, box, channels, weights, SgemmMatrix{gathered, box, false},
                SgemmOutput{out + rows.first * aw.output, out_plane, 1.0f, 1.0f, nullptr, nullptr},
                threads);
          continue;
        }
        float* product = product_buffer.get(out_channels * box);
        sgemm(out_channels, box, channels, weights, SgemmMatrix{gathered, box, false},
              SgemmOutput{product, box, 1.0f, 0.0f, nullptr, nullptr}, threads);
#pragma omp parallel for num_threads(loop_threads(out_channels, box, threads))
        for (std::int64_t m = 0; m < out_channels; ++m) {
          const float* from = product + m * box;
          float* plane = out + m * out_plane;
          for (std::int64_t oh = rows.first; oh < rows.last; ++oh) {
            float* row = plane + oh * aw.output + cols.first;
            for (std::int64_t i = 0; i < cols.size(); ++i) row[i] += *from++;
          }
        }
      }
    }
  }
}

}  // namespace collage::native
