// Conv (ONNX opsets 1-22 share these semantics): 1-D, 2-D and 3-D, groups,
// strides, dilations, explicit and automatic padding, optional bias.
//
// Four strategies, picked per node:
//  - Winograd F(4x4, 3x3) for 3x3 kernels of stride 1 with enough channels
//    and tiles (conv_winograd.h);
//  - pointwise (1x1, stride 1, no padding): the image already is the
//    column matrix, so each group is one GEMM over it;
//  - direct (1-D/2-D with few channels per group: depthwise, ResNeXt): a
//    GEMM with m = outputs per group would spend its time packing, so each
//    input plane is copied once, padded and phase-split (PhasePlane), and
//    every (channel, tap) product of a block of outputs stays in registers;
//  - everything else: im2col + GEMM per group, where the column matrix is
//    never materialized: the GEMM packs its B panels straight from the image
//    (Im2colSource), so memory stays bounded by the GEMM's own blocking.
// The bias is added in the GEMM's store.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <vector>

#include "collage/backends/native/compute_kernels.h"
#include "collage/backends/native/conv_taps.h"
#include "collage/backends/native/conv_winograd.h"
#include "collage/backends/native/sgemm.h"

namespace collage::native {
namespace {

// dst[0, n) = src[0, n) for n <= kSgemmNr, with vector moves; the masked
// part neither reads nor writes past n.
inline void copy_short(float* dst, const float* src, std::int64_t n) {
  std::int64_t i = 0;
  if (n >= 8) {
    _mm256_storeu_ps(dst, _mm256_loadu_ps(src));
    i = 8;
  }
  if (n == 16) {
    _mm256_storeu_ps(dst + 8, _mm256_loadu_ps(src + 8));
    return;
  }
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n - i)),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  _mm256_maskstore_ps(dst + i, mask, _mm256_maskload_ps(src + i, mask));
}

// op(B) of the convolution GEMM for one image and one group: row
// (c, kd, kh, kw) and column (od, oh, ow) hold the input element the
// kernel tap (kd, kh, kw) of channel c sees at output position (od, oh, ow),
// or zero in the padding.
class Im2colSource final : public SgemmPanelSource {
 public:
  Im2colSource(const float* image, const Window3d& window) : image_(image), w_(window) {
    plane_ = w_[0].input * w_[1].input * w_[2].input;
  }

  void pack_panel(std::int64_t k0, std::int64_t kc, std::int64_t j0, std::int64_t nr,
                  float* panel) const override {
    // The panel's columns, split into runs that lie in one output row: along
    // a run the input positions advance by the width stride.
    struct Run {
      std::int64_t column;  // first panel column of the run
      std::int64_t length;
      std::int64_t d0, h0, w0;  // input position of the first column's window origin
    };
    Run runs[kSgemmNr];
    int run_count = 0;
    const std::int64_t out_w = w_[2].output;
    const std::int64_t out_hw = w_[1].output * out_w;
    for (std::int64_t j = 0; j < nr;) {
      const std::int64_t column = j0 + j;
      const std::int64_t od = column / out_hw;
      const std::int64_t oh = column / out_w % w_[1].output;
      const std::int64_t ow = column % out_w;
      const std::int64_t length = std::min(nr - j, out_w - ow);
      runs[run_count++] =
          Run{j, length, od * w_[0].stride - w_[0].pad_begin, oh * w_[1].stride - w_[1].pad_begin,
              ow * w_[2].stride - w_[2].pad_begin};
      j += length;
    }

    // Row k0 as (channel, kd, kh, kw), advanced like an odometer.
    const std::int64_t kernel_hw = w_[1].kernel * w_[2].kernel;
    const std::int64_t kernel_size = w_[0].kernel * kernel_hw;
    std::int64_t channel = k0 / kernel_size;
    std::int64_t kd = k0 % kernel_size / kernel_hw;
    std::int64_t kh = k0 % kernel_hw / w_[2].kernel;
    std::int64_t kw = k0 % w_[2].kernel;
    const std::int64_t in_h = w_[1].input;
    const std::int64_t in_w = w_[2].input;
    const std::int64_t stride_w = w_[2].stride;

    for (std::int64_t p = 0; p < kc; ++p, panel += kSgemmNr) {
      const float* channel_data = image_ + channel * plane_;
      const std::int64_t dd = kd * w_[0].dilation;
      const std::int64_t dh = kh * w_[1].dilation;
      const std::int64_t dw = kw * w_[2].dilation;
      for (int r = 0; r < run_count; ++r) {
        const Run& run = runs[r];
        float* dst = panel + run.column;
        const std::int64_t id = run.d0 + dd;
        const std::int64_t ih = run.h0 + dh;
        if (id < 0 || id >= w_[0].input || ih < 0 || ih >= in_h) {
          std::fill(dst, dst + run.length, 0.0f);
          continue;
        }
        const float* row = channel_data + (id * in_h + ih) * in_w;
        const std::int64_t iw0 = run.w0 + dw;
        if (stride_w == 1 && iw0 >= 0 && iw0 + run.length <= in_w) {
          copy_short(dst, row + iw0, run.length);
          continue;
        }
        for (std::int64_t j = 0; j < run.length; ++j) {
          const std::int64_t iw = iw0 + j * stride_w;
          dst[j] = iw >= 0 && iw < in_w ? row[iw] : 0.0f;
        }
      }
      std::fill(panel + nr, panel + kSgemmNr, 0.0f);
      if (++kw == w_[2].kernel) {
        kw = 0;
        if (++kh == w_[1].kernel) {
          kh = 0;
          if (++kd == w_[0].kernel) {
            kd = 0;
            ++channel;
          }
        }
      }
    }
  }

 private:
  const float* image_;
  Window3d w_;
  std::int64_t plane_;
};

bool is_pointwise(const ConvShape& shape) {
  return std::all_of(shape.window.begin(), shape.window.end(), [](const WindowAxis& axis) {
    return axis.kernel == 1 && axis.stride == 1 && axis.pad_begin == 0 && axis.output == axis.input;
  });
}

// Blocks of kV vectors of output columns of one output row, for the kMg
// output channels of a group, from column `ox` on while whole blocks fit;
// returns where it stopped. sources[t] is where (channel, tap) t's inputs
// for this row start; weights are [kMg][taps]. Each input vector is loaded
// once for all kMg channels, and the kMg * kV accumulators are independent
// FMA chains that hide the FMA latency.
template <int kMg, int kV>
std::int64_t direct_blocks(const float* const* sources, std::int64_t taps, const float* weights,
                           const float* bias, float* output, std::int64_t channel_stride,
                           std::int64_t ox, std::int64_t width) {
  for (; ox + 8 * kV <= width; ox += 8 * kV) {
    __m256 acc[kMg][kV];
#pragma GCC unroll 8
    for (int j = 0; j < kMg; ++j) {
#pragma GCC unroll 8
      for (int v = 0; v < kV; ++v) acc[j][v] = _mm256_set1_ps(bias[j]);
    }
    for (std::int64_t t = 0; t < taps; ++t) {
      const float* src = sources[t] + ox;
      __m256 x[kV];
#pragma GCC unroll 8
      for (int v = 0; v < kV; ++v) x[v] = _mm256_loadu_ps(src + 8 * v);
#pragma GCC unroll 8
      for (int j = 0; j < kMg; ++j) {
        const __m256 w = _mm256_broadcast_ss(weights + j * taps + t);
#pragma GCC unroll 8
        for (int v = 0; v < kV; ++v) acc[j][v] = _mm256_fmadd_ps(w, x[v], acc[j][v]);
      }
    }
#pragma GCC unroll 8
    for (int j = 0; j < kMg; ++j) {
#pragma GCC unroll 8
      for (int v = 0; v < kV; ++v) {
        _mm256_storeu_ps(output + j * channel_stride + ox + 8 * v, acc[j][v]);
      }
    }
  }
  return ox;
}

// One output row of the kMg output channels of a group: the widest blocks
// first, then narrower ones, then the last columns as one masked vector.
template <int kMg>
void direct_row(const float* const* sources, std::int64_t taps, const float* weights,
                const float* bias, float* output, std::int64_t channel_stride, std::int64_t width) {
  constexpr int kV = kMg >= 8 ? 1 : 8 / kMg;
  std::int64_t ox =
      direct_blocks<kMg, kV>(sources, taps, weights, bias, output, channel_stride, 0, width);
  if constexpr (kV >= 8) {
    ox = direct_blocks<kMg, 4>(sources, taps, weights, bias, output, channel_stride, ox, width);
  }
  if constexpr (kV >= 4) {
    ox = direct_blocks<kMg, 2>(sources, taps, weights, bias, output, channel_stride, ox, width);
  }
  if constexpr (kV >= 2) {
    ox = direct_blocks<kMg, 1>(sources, taps, weights, bias, output, channel_stride, ox, width);
  }
  if (ox == width) return;
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(width - ox)),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  __m256 acc[kMg];
#pragma GCC unroll 8
  for (int j = 0; j < kMg; ++j) acc[j] = _mm256_set1_ps(bias[j]);
  for (std::int64_t t = 0; t < taps; ++t) {
    const __m256 x = _mm256_maskload_ps(sources[t] + ox, mask);
#pragma GCC unroll 8
    for (int j = 0; j < kMg; ++j) {
      acc[j] = _mm256_fmadd_ps(_mm256_broadcast_ss(weights + j * taps + t), x, acc[j]);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < kMg; ++j) _mm256_maskstore_ps(output + j * channel_stride + ox, mask, acc[j]);
}

using DirectRow = void (*)(const float* const*, std::int64_t, const float*, const float*, float*,
                           std::int64_t, std::int64_t);

// The largest number of output channels per group the direct path takes.
constexpr std::int64_t kMaxDirectOutputs = 7;

DirectRow direct_row_for(std::int64_t outputs) {
  switch (outputs) {
    case 1:
      return direct_row<1>;
    case 2:
      return direct_row<2>;
    case 3:
      return direct_row<3>;
    case 4:
      return direct_row<4>;
    case 5:
      return direct_row<5>;
    case 6:
      return direct_row<6>;
    case 7:
      return direct_row<7>;
    default:
      assert(false && "direct_row_for: too many outputs per group");
      return nullptr;
  }
}

void run_direct(const ConvShape& shape, const float* x, const float* w, const float* bias, float* y,
                int threads) {
  const std::int64_t cg = shape.group_channels();
  const std::int64_t mg = shape.group_out_channels();
  const WindowAxis& ah = shape.window[1];
  const WindowAxis& aw = shape.window[2];
  const std::int64_t kernel_taps = ah.kernel * aw.kernel;
  const std::int64_t taps = cg * kernel_taps;
  const std::int64_t units = shape.batch * shape.groups;
  const std::int64_t out_plane = shape.output_plane();
  const DirectRow row_kernel = direct_row_for(mg);
  const std::vector<float> no_bias(static_cast<std::size_t>(mg), 0.0f);
#pragma omp parallel num_threads(loop_threads(units, out_plane* taps* mg, threads))
  {
    std::vector<PhasePlane> planes(static_cast<std::size_t>(cg), PhasePlane(ah, aw));
    std::vector<const float*> sources(static_cast<std::size_t>(taps));
#pragma omp for schedule(static)
    for (std::int64_t unit = 0; unit < units; ++unit) {
      // The group's cg input channels feed its mg consecutive output channels.
      const std::int64_t n = unit / shape.groups;
      const std::int64_t g = unit % shape.groups;
      const float* image = x + (n * shape.channels + g * cg) * shape.input_plane();
      for (std::int64_t c = 0; c < cg; ++c) {
        planes[static_cast<std::size_t>(c)].load(image + c * shape.input_plane(), 0.0f);
      }
      const float* group_bias = bias != nullptr ? bias + g * mg : no_bias.data();
      float* out = y + (n * shape.out_channels + g * mg) * out_plane;
      for (std::int64_t oy = 0; oy < ah.output; ++oy) {
        for (std::int64_t c = 0; c < cg; ++c) {
          for (std::int64_t ky = 0; ky < ah.kernel; ++ky) {
            for (std::int64_t kx = 0; kx < aw.kernel; ++kx) {
              sources[static_cast<std::size_t>(c * kernel_taps + ky * aw.kernel + kx)] =
                  planes[static_cast<std::size_t>(c)].tap(oy, ky, kx);
            }
          }
        }
        row_kernel(sources.data(), taps, w + g * mg * taps, group_bias, out + oy * aw.output,
                   out_plane, aw.output);
      }
    }
  }
}

void run_gemm_conv(const ConvShape& shape, const float* x, const float* w, const float* bias,
                   float* y, int threads) {
  const std::int64_t cg = shape.group_channels();
  const std::int64_t mg = shape.group_out_channels();
  const std::int64_t k = cg * shape.kernel_size();
  const std::int64_t in_plane = shape.input_plane();
  const std::int64_t out_plane = shape.output_plane();
  const bool pointwise = is_pointwise(shape);

  auto one_group = [&](std::int64_t unit, int gemm_threads) {
    const std::int64_t n = unit / shape.groups;
    const std::int64_t g = unit % shape.groups;
    const float* image = x + (n * shape.channels + g * cg) * in_plane;
    const SgemmMatrix weights{w + g * mg * k, k, false};
    const SgemmOutput out{y + (n * shape.out_channels + g * mg) * out_plane, out_plane, 1.0f, 0.0f,
                          bias != nullptr ? bias + g * mg : nullptr,         nullptr};
    if (pointwise) {
      sgemm(mg, out_plane, k, weights, SgemmMatrix{image, in_plane, false}, out, gemm_threads);
      return;
    }
    sgemm(mg, out_plane, k, weights, Im2colSource(image, shape.window), out, gemm_threads);
  };

  // Many small groups (ResNeXt, batched inputs) parallelize better across
  // groups than inside each GEMM.
  const std::int64_t units = shape.batch * shape.groups;
  if (threads > 1 && units >= threads) {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (std::int64_t unit = 0; unit < units; ++unit) one_group(unit, 1);
    return;
  }
  for (std::int64_t unit = 0; unit < units; ++unit) one_group(unit, threads);
}

}  // namespace

void run_conv_prepared(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                       std::span<Tensor> outputs, int threads, const ConvOperands* prepared) {
  Tensor& y = outputs[0];
  const ConvShape shape = conv_shape(node, inputs, y);
  if (y.numel() == 0) return;
  const float* x = inputs[0].data<float>();
  const float* w = inputs[1].data<float>();
  const Tensor* bias = optional_input(inputs, 2);
  const float* bias_data = bias != nullptr ? bias->data<float>() : nullptr;
  auto prepared_weights = [&](const std::vector<float> ConvOperands::*member) -> const float* {
    return prepared != nullptr && !(prepared->*member).empty() ? (prepared->*member).data()
                                                               : nullptr;
  };
  if (conv_by_taps_fits(shape)) {
    run_conv_by_taps(shape, x, w, prepared_weights(&ConvOperands::by_tap), bias_data,
                     y.data<float>(), threads);
    return;
  }
  if (winograd_fits(shape)) {
    run_winograd(shape, x, w, bias_data, y.data<float>(), threads,
                 prepared_weights(&ConvOperands::winograd));
    return;
  }
  // With few channels per group on either side (depthwise, ResNeXt), a GEMM
  // would have a tiny m and spend its time packing B for it.
  const bool direct =
      shape.group_channels() <= 16 && shape.group_out_channels() <= kMaxDirectOutputs &&
      shape.window[0].input == 1 && shape.window[0].output == 1 && shape.window[0].kernel == 1;
  if (direct) {
    run_direct(shape, x, w, bias_data, y.data<float>(), threads);
    return;
  }
  run_gemm_conv(shape, x, w, bias_data, y.data<float>(), threads);
}

namespace {

void run_conv(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
              std::span<Tensor> outputs, int threads) {
  run_conv_prepared(graph, node, inputs, outputs, threads, nullptr);
}

}  // namespace

bool check_conv(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || node.outputs.size() != 1) return false;
  if (!is_float32(graph, node.input(0)) || !is_float32(graph, node.input(1))) return false;
  if (!float32_io(graph, node, 3)) return false;
  return conv_geometry_fits(graph, node, node.input(0), node.input(1));
}

bool conv_geometry_fits(const Graph& graph, const Node& node, ValueId data, ValueId weights) {
  const int rank = graph.type(data).rank();
  if (rank < 3 || rank > 5 || graph.type(weights).rank() != rank) return false;
  if (graph.type(node.outputs[0]).rank() != rank) return false;
  const bool transposed = is_transposed_convolution(node);
  const std::int64_t groups = node.attributes.get_int("group", 1);
  const Shape& x = graph.type(data).shape;
  const Shape& w = graph.type(weights).shape;
  if (groups < 1 || x[1] % groups != 0) return false;
  const bool weights_fit = transposed ? w[0] == x[1] : w[0] % groups == 0 && w[1] * groups == x[1];
  if (!weights_fit) return false;
  const Shape input(x.begin() + 2, x.end());
  const Shape kernel(w.begin() + 2, w.end());
  return transposed ? transposed_window(node, input, kernel).ok()
                    : forward_window(node, input, kernel).ok();
}

namespace {

constexpr OpEntry kConvOps[] = {
    {"Conv", run_conv, check_conv},
};

}  // namespace

std::span<const OpEntry> conv_ops() { return kConvOps; }

}  // namespace collage::native
