#include "collage/backends/native/layout_ops.h"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "collage/backends/native/compute_kernels.h"
#include "collage/backends/native/conv_winograd.h"
#include "collage/backends/native/elementwise_math.h"
#include "collage/backends/native/op_registry.h"
#include "collage/ir/error.h"

namespace collage::native {
namespace {

bool is_pool(const Node& node) {
  return node.op_type == "MaxPool" || node.op_type == "AveragePool" ||
         node.op_type == "GlobalMaxPool" || node.op_type == "GlobalAveragePool";
}

// A pool runs in runs of channels when it is 2-D and leaves out Indices.
bool pool_in_layout(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || node.outputs.empty()) return false;
  for (std::size_t i = 1; i < node.outputs.size(); ++i) {
    if (node.outputs[i] != kNoValue) return false;
  }
  const TensorType& x = graph.type(node.input(0));
  if (x.dtype != DType::kFloat32 || x.rank() != 4) return false;
  if (node.op_type == "GlobalMaxPool" || node.op_type == "GlobalAveragePool") return true;
  return node.attributes.get_ints("kernel_shape").size() == 2;
}

bool concat_of_channels(const Graph& graph, const Node& node) {
  if (node.op_type != "Concat" || node.outputs.size() != 1) return false;
  const TensorType& y = graph.type(node.outputs[0]);
  if (y.rank() != 4 || y.dtype != DType::kFloat32) return false;
  const std::int64_t axis = node.attributes.get_int("axis", 0);
  return axis == 1 || axis == -3;
}

// Concat along channels of values stored in `layout`.
void concat_in_layout(std::span<const Tensor> inputs, Tensor& y, EdgeLayout layout, int threads) {
  const Shape& out = y.shape();
  const std::int64_t pixels = out[2] * out[3];
  float* yd = y.data<float>();
  if (layout == EdgeLayout::kChannelsLast) {
    // [N*H*W, C]: each input fills its columns of every row.
    const std::int64_t rows = out[0] * pixels;
    const std::int64_t channels = out[1];
#pragma omp parallel for num_threads(loop_threads(rows, channels, threads)) schedule(static)
    for (std::int64_t row = 0; row < rows; ++row) {
      std::int64_t offset = 0;
      for (const Tensor& x : inputs) {
        const std::int64_t c = x.shape()[1];
        std::memcpy(yd + row * channels + offset, x.data<float>() + row * c,
                    static_cast<std::size_t>(c) * sizeof(float));
        offset += c;
      }
    }
    return;
  }
  // Blocked: [N, C / block, H, W, block]; each input is whole blocks, a
  // contiguous run per image.
  const std::int64_t images = out[0];
  const std::int64_t image_size = out[1] * pixels;
  const std::int64_t parts = static_cast<std::int64_t>(inputs.size());
#pragma omp parallel for num_threads(loop_threads(images* parts, image_size / parts, threads)) \
    schedule(static)
  for (std::int64_t task = 0; task < images * parts; ++task) {
    const std::int64_t n = task / parts;
    const std::int64_t part = task % parts;
    std::int64_t offset = 0;
    for (std::int64_t k = 0; k < part; ++k)
      offset += inputs[static_cast<std::size_t>(k)].shape()[1];
    const Tensor& x = inputs[static_cast<std::size_t>(part)];
    const std::int64_t size = x.shape()[1] * pixels;
    std::memcpy(yd + n * image_size + offset * pixels, x.data<float>() + n * size,
                static_cast<std::size_t>(size) * sizeof(float));
  }
}

// A Gather of channels: along axis 1 of a 4-D float32 tensor, by indices of
// one axis, so that the output is 4-D too (a channel shuffle, a selection).
bool gather_of_channels(const Graph& graph, const Node& node) {
  if (node.op_type != "Gather" || node.inputs.size() != 2 || node.outputs.size() != 1) {
    return false;
  }
  const TensorType& x = graph.type(node.input(0));
  if (x.rank() != 4 || x.dtype != DType::kFloat32) return false;
  const std::int64_t axis = node.attributes.get_int("axis", 0);
  return (axis == 1 || axis == -3) && graph.type(node.input(1)).rank() == 1;
}

// The channels of one run of a tensor of `type` stored in `layout`: one for
// a tensor stored as plain there.
std::int64_t stored_lanes(const TensorType& type, EdgeLayout layout) {
  return laid_out(type, layout) ? layout_lanes(layout, type.shape[1]) : 1;
}

// A stretch of one run of gathered channels, read from offsets within a
// pixel of the source image: `count` lanes from `first` on, or, `paired`,
// `count` pairs taking turns from `first` on and from `second` on (a shuffle
// of two groups).
struct GatherPiece {
  std::int64_t lane = 0;
  std::int64_t count = 0;
  std::int64_t first = 0;
  std::int64_t second = 0;
  bool paired = false;
};

// The pieces that read `source` (the offset of each lane of a run) with
// the fewest and longest copies.
std::vector<GatherPiece> gather_pieces(std::span<const std::int64_t> source) {
  std::vector<GatherPiece> pieces;
  const auto lanes = static_cast<std::int64_t>(source.size());
  std::int64_t lane = 0;
  while (lane < lanes) {
    const std::int64_t first = source[static_cast<std::size_t>(lane)];
    std::int64_t run = 1;
    while (lane + run < lanes && source[static_cast<std::size_t>(lane + run)] == first + run) ++run;
    std::int64_t pairs = 0;
    if (lane + 1 < lanes) {
      const std::int64_t second = source[static_cast<std::size_t>(lane + 1)];
      while (lane + 2 * pairs + 1 < lanes &&
             source[static_cast<std::size_t>(lane + 2 * pairs)] == first + pairs &&
             source[static_cast<std::size_t>(lane + 2 * pairs + 1)] == second + pairs) {
        ++pairs;
      }
      if (pairs >= 2 && 2 * pairs > run) {
        pieces.push_back({lane, pairs, first, second, true});
        lane += 2 * pairs;
        continue;
      }
    }
    pieces.push_back({lane, run, first, 0, false});
    lane += run;
  }
  return pieces;
}

// to[2m] = a[m], to[2m + 1] = b[m] for m < pairs.
void interleave_pairs(const float* a, const float* b, float* to, std::int64_t pairs) {
  std::int64_t m = 0;
#if defined(__AVX2__)
  for (; m + 8 <= pairs; m += 8) {
    const __m256 va = _mm256_loadu_ps(a + m);
    const __m256 vb = _mm256_loadu_ps(b + m);
    const __m256 low = _mm256_unpacklo_ps(va, vb);
    const __m256 high = _mm256_unpackhi_ps(va, vb);
    _mm256_storeu_ps(to + 2 * m, _mm256_permute2f128_ps(low, high, 0x20));
    _mm256_storeu_ps(to + 2 * m + 8, _mm256_permute2f128_ps(low, high, 0x31));
  }
  for (; m + 4 <= pairs; m += 4) {
    const __m128 va = _mm_loadu_ps(a + m);
    const __m128 vb = _mm_loadu_ps(b + m);
    _mm_storeu_ps(to + 2 * m, _mm_unpacklo_ps(va, vb));
    _mm_storeu_ps(to + 2 * m + 4, _mm_unpackhi_ps(va, vb));
  }
#endif
  for (; m < pairs; ++m) {
    to[2 * m] = a[m];
    to[2 * m + 1] = b[m];
  }
}

// Gather of channels `node` of `x` stored in `layout`. Both layouts, and
// plain, place channel c of pixel p of image n at
// n*C*P + (c / lanes) * P * lanes + p * lanes + c % lanes, so each run of
// output lanes reads fixed offsets from its pixel of the source image:
// whole stretches where they are consecutive, pairs in turn where a
// shuffle interleaves two groups.
void gather_channels_in_layout(const Node& node, const Tensor& x, const Tensor& indices, Tensor& y,
                               EdgeLayout layout, int threads) {
  const Shape& in = x.shape();
  const Shape& out = y.shape();
  const std::int64_t pixels = in[2] * in[3];
  const std::int64_t in_lanes = stored_lanes(x.type(), layout);
  const std::int64_t out_lanes = stored_lanes(y.type(), layout);
  std::vector<std::int64_t> source(static_cast<std::size_t>(out[1]));
  for (std::int64_t j = 0; j < out[1]; ++j) {
    std::int64_t c = indices.int_at(j);
    if (c < 0) c += in[1];
    if (c < 0 || c >= in[1]) {
      throw Error(fmt::format("index {} is out of range for {} channels", indices.int_at(j), in[1]),
                  {.node = node.name});
    }
    source[static_cast<std::size_t>(j)] = c / in_lanes * pixels * in_lanes + c % in_lanes;
  }
  const std::int64_t runs = out[1] / out_lanes;
  std::vector<std::vector<GatherPiece>> pieces;
  for (std::int64_t run = 0; run < runs; ++run) {
    pieces.push_back(gather_pieces(std::span<const std::int64_t>(source).subspan(
        static_cast<std::size_t>(run * out_lanes), static_cast<std::size_t>(out_lanes))));
  }
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
  const std::int64_t rows = out[0] * runs * pixels;
#pragma omp parallel num_threads(loop_threads(rows, out_lanes, threads))
  {
    // Each thread's share of the rows (one run of lanes of one pixel each)
    // is contiguous; it is walked a block (one run of one image) at a time,
    // each piece over the block's pixels.
    const std::int64_t team = omp_get_num_threads();
    const std::int64_t me = omp_get_thread_num();
    const std::int64_t end = rows * (me + 1) / team;
    for (std::int64_t row = rows * me / team; row < end;) {
      const std::int64_t block = row / pixels;
      const std::int64_t first = row % pixels;
      const std::int64_t last = std::min(pixels, first + (end - row));
      const float* image = xd + block / runs * in[1] * pixels;
      float* to = yd + block * pixels * out_lanes;
      for (const GatherPiece& piece : pieces[static_cast<std::size_t>(block % runs)]) {
        for (std::int64_t p = first; p < last; ++p) {
          const float* pixel = image + p * in_lanes;
          float* lanes = to + p * out_lanes + piece.lane;
          if (piece.paired) {
            interleave_pairs(pixel + piece.first, pixel + piece.second, lanes, piece.count);
          } else {
            std::copy_n(pixel + piece.first, piece.count, lanes);
          }
        }
      }
      row += last - first;
    }
  }
}

}  // namespace

std::int64_t layout_lanes(EdgeLayout layout, std::int64_t channels) {
  return layout == EdgeLayout::kChannelsLast ? channels : edge_layout_block(layout);
}

bool laid_out(const TensorType& type, EdgeLayout layout) {
  return layout != EdgeLayout::kPlain && !edge_layout_free(type);
}

Shape laid_out_dims(const Shape& shape, EdgeLayout layout) {
  Shape s = shape;
  while (s.size() < 4) s.insert(s.begin(), 1);
  if (layout == EdgeLayout::kPlain) return s;
  if (layout == EdgeLayout::kChannelsLast) return {s[0], s[2], s[3], s[1]};
  const std::int64_t block = edge_layout_block(layout);
  if (s[1] == 1) return {s[0], 1, s[2], s[3], 1};
  return {s[0], s[1] / block, s[2], s[3], block};
}

bool runs_in_layout(const Graph& graph, const Node& node, EdgeLayout layout) {
  if (layout == EdgeLayout::kPlain) return true;
  bool any = false;
  auto check = [&](ValueId id) {
    if (id == kNoValue) return true;
    const TensorType& type = graph.type(id);
    if (type.at_run_time) return false;
    if (!laid_out(type, layout)) return true;
    any = true;
    return type.dtype == DType::kFloat32 && edge_layout_fits(layout, type);
  };
  for (ValueId id : node.inputs) {
    if (!check(id)) return false;
  }
  for (ValueId id : node.outputs) {
    if (!check(id)) return false;
  }
  if (!any) return true;
  if (!node_supported(graph, node)) return false;
  if (float_elementwise_fn(graph, node)) return graph.type(node.outputs[0]).rank() == 4;
  if (is_pool(node)) return pool_in_layout(graph, node);
  if (node.op_type == "GroupNormalization") return graph.type(node.input(0)).rank() == 4;
  if (node.op_type == "Resize") return resize_in_lanes_fits(graph, node);
  if (node.op_type == "Conv") {
    return depthwise_in_lanes_fits(graph, node) || winograd_in_layout_fits(graph, node, layout);
  }
  return concat_of_channels(graph, node) || gather_of_channels(graph, node);
}

void run_in_layout(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                   std::span<Tensor> outputs, EdgeLayout layout, int threads,
                   const ConvOperands* conv) {
  if (conv != nullptr && node.op_type != "Conv" && node.op_type != "GroupNormalization") {
    throw Error(fmt::format("{} takes no prepared convolution operands", node.op_type),
                {.node = node.name});
  }
  if (is_pool(node)) {
    const Tensor& x = inputs[0];
    return pool_in_lanes(node, x, outputs[0], layout_lanes(layout, x.shape()[1]), threads);
  }
  if (node.op_type == "GroupNormalization") {
    return group_norm_in_lanes(node, inputs, outputs[0], layout_lanes(layout, inputs[0].shape()[1]),
                               threads,
                               conv != nullptr ? std::span<const ElementwiseFn>(conv->epilogue)
                                               : std::span<const ElementwiseFn>());
  }
  if (node.op_type == "Resize") {
    return resize_in_lanes(graph, node, inputs, outputs[0],
                           layout_lanes(layout, inputs[0].shape()[1]), threads);
  }
  if (node.op_type == "Conv") {
    const std::int64_t lanes = layout_lanes(layout, inputs[0].shape()[1]);
    const ConvShape shape = conv_shape(node, inputs, outputs[0]);
    const std::int64_t out_lanes = layout_lanes(layout, shape.out_channels);
    if (winograd_in_lanes_fits(shape, lanes, out_lanes)) {
      const Tensor* bias = optional_input(inputs, 2);
      const bool prepared = conv != nullptr && !conv->winograd.empty();
      return run_winograd_in_lanes(shape, inputs[0].data<float>(), lanes, inputs[1].data<float>(),
                                   bias != nullptr ? bias->data<float>() : nullptr,
                                   outputs[0].data<float>(), out_lanes, threads,
                                   prepared ? conv->winograd.data() : nullptr,
                                   conv != nullptr ? std::span<const ElementwiseFn>(conv->epilogue)
                                                   : std::span<const ElementwiseFn>());
    }
    return depthwise_conv_in_lanes(node, inputs, outputs[0], lanes, threads, conv);
  }
  if (concat_of_channels(graph, node)) {
    return concat_in_layout(inputs, outputs[0], layout, threads);
  }
  if (gather_of_channels(graph, node)) {
    return gather_channels_in_layout(node, inputs[0], inputs[1], outputs[0], layout, threads);
  }
  throw Error(
      fmt::format("{} does not run on values stored {}", node.op_type, edge_layout_name(layout)),
      {.node = node.name});
}

}  // namespace collage::native
