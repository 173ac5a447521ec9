#include "collage/runtime/layout_convert.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "collage/ir/block_transpose.h"

namespace collage {
namespace {

// Each group of channels (all of them for channels-last, one block for a
// blocked layout) is a [channels, H*W] matrix transposed to [H*W, channels],
// or back with `to_plain`, in square tiles, in parallel. T is float, or a
// byte for 8-bit values.
template <typename T>
void tiled_convert(const T* src, T* dst, const Shape& s, EdgeLayout layout, bool to_plain,
                   int threads) {
  const std::int64_t channels = s[1];
  const std::int64_t group =
      layout == EdgeLayout::kChannelsLast ? channels : edge_layout_block(layout);
  const std::int64_t batches = s[0] * (channels / group);
  const std::int64_t pixels = s[2] * s[3];
  using Job = BatchedTransposeOf<T>;
  const Job job =
      to_plain ? Job(src, dst, batches, pixels, group) : Job(src, dst, batches, group, pixels);
  const std::int64_t tasks = job.tasks();
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (std::int64_t task = 0; task < tasks; ++task) job.tile(task);
}

// One conversion from or, with `to_plain`, to plain.
void convert_once(const TensorType& type, const void* src, void* dst, EdgeLayout layout,
                  bool to_plain, int threads) {
  if (type.dtype == DType::kFloat32) {
    tiled_convert(static_cast<const float*>(src), static_cast<float*>(dst), type.shape, layout,
                  to_plain, threads);
  } else {
    tiled_convert(static_cast<const std::uint8_t*>(src), static_cast<std::uint8_t*>(dst),
                  type.shape, layout, to_plain, threads);
  }
}

}  // namespace

void convert_edge_layout(const TensorType& type, const void* src, EdgeLayout from, void* dst,
                         EdgeLayout to, int threads) {
  if (from == to || edge_layout_free(type)) {
    if (src != dst) std::memcpy(dst, src, type.byte_size());
    return;
  }
  if (from == EdgeLayout::kPlain) return convert_once(type, src, dst, to, false, threads);
  if (to == EdgeLayout::kPlain) return convert_once(type, src, dst, from, true, threads);
  std::vector<std::byte> plain(type.byte_size());
  convert_once(type, src, plain.data(), from, true, threads);
  convert_once(type, plain.data(), dst, to, false, threads);
}

}  // namespace collage
