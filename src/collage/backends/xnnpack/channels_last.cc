#include "collage/backends/xnnpack/channels_last.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "collage/ir/block_transpose.h"

namespace collage::xnnpack {
namespace {

// Below this many elements, waking the pool costs more than the copy.
constexpr std::int64_t kParallelThreshold = 1 << 16;

// Transposes `batches` dense [rows, cols] matrices of T to [cols, rows]
// (bytes XORed with `mask`).
template <typename T>
void transpose_batches(const T* src, T* dst, std::int64_t batches, std::int64_t rows,
                       std::int64_t cols, pthreadpool_t pool, std::uint8_t mask = 0) {
  using Job = BatchedTransposeOf<T>;
  Job job(src, dst, batches, rows, cols, mask);
  auto tasks = static_cast<std::size_t>(job.tasks());
  if (pool != nullptr && batches * rows * cols >= kParallelThreshold) {
    pthreadpool_parallelize_1d(
        pool,
        [](void* context, std::size_t task) {
          static_cast<Job*>(context)->tile(static_cast<std::int64_t>(task));
        },
        &job, tasks, 0);
    return;
  }
  for (std::size_t task = 0; task < tasks; ++task) job.tile(static_cast<std::int64_t>(task));
}

}  // namespace

bool is_layout_free(const Shape& shape) {
  if (shape.size() != 4) return true;
  return shape[1] == 1 || shape[2] * shape[3] == 1;
}

std::vector<std::size_t> xnn_dims(const Shape& shape, Layout layout) {
  if (shape.empty()) return {1};
  if (layout == Layout::kChannelsLast && shape.size() == 4) {
    return {static_cast<std::size_t>(shape[0]), static_cast<std::size_t>(shape[2]),
            static_cast<std::size_t>(shape[3]), static_cast<std::size_t>(shape[1])};
  }
  return std::vector<std::size_t>(shape.begin(), shape.end());
}

Shape pad_to_rank(const Shape& shape, int rank) {
  Shape padded(static_cast<std::size_t>(std::max(0, rank - static_cast<int>(shape.size()))), 1);
  padded.insert(padded.end(), shape.begin(), shape.end());
  return padded;
}

void nchw_to_nhwc(const float* src, float* dst, std::int64_t n, std::int64_t c, std::int64_t hw,
                  pthreadpool_t pool) {
  transpose_batches(src, dst, n, c, hw, pool);
}

void nhwc_to_nchw(const float* src, float* dst, std::int64_t n, std::int64_t c, std::int64_t hw,
                  pthreadpool_t pool) {
  transpose_batches(src, dst, n, hw, c, pool);
}

std::vector<float> constant_in_layout(const float* data, const Shape& shape, Layout layout) {
  std::vector<float> result(static_cast<std::size_t>(shape_numel(shape)));
  if (layout == Layout::kPlain || is_layout_free(shape)) {
    std::copy(data, data + result.size(), result.begin());
    return result;
  }
  assert(shape.size() == 4 && "constant_in_layout: channels-last needs a 4-D shape");
  nchw_to_nhwc(data, result.data(), shape[0], shape[1], shape[2] * shape[3], nullptr);
  return result;
}

void transpose_nchw(const TensorType& type, const void* src, void* dst, bool to_channels_last,
                    bool flip, pthreadpool_t pool) {
  const Shape& s = type.shape;
  const std::int64_t hw = s[2] * s[3];
  // NCHW is [N, C, HW] matrices to transpose, NHWC [N, HW, C].
  const std::int64_t rows = to_channels_last ? s[1] : hw;
  const std::int64_t cols = to_channels_last ? hw : s[1];
  if (type.dtype == DType::kFloat32) {
    transpose_batches(static_cast<const float*>(src), static_cast<float*>(dst), s[0], rows, cols,
                      pool);
    return;
  }
  transpose_batches(static_cast<const std::uint8_t*>(src), static_cast<std::uint8_t*>(dst), s[0],
                    rows, cols, pool, flip ? 0x80 : 0);
}

void flip_sign_bits(const std::uint8_t* src, std::uint8_t* dst, std::size_t size) {
  constexpr std::uint64_t kSignBits = 0x8080808080808080ULL;
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, src + i, 8);
    word ^= kSignBits;
    std::memcpy(dst + i, &word, 8);
  }
  for (; i < size; ++i) dst[i] = src[i] ^ 0x80;
}

std::vector<std::uint8_t> eight_bit_in_layout(const Tensor& data, const Shape& shape, Layout layout,
                                              bool flip) {
  const auto* bytes = static_cast<const std::uint8_t*>(data.raw());
  std::vector<std::uint8_t> result(static_cast<std::size_t>(shape_numel(shape)));
  std::uint8_t* out = result.data();
  if (layout == Layout::kPlain || is_layout_free(shape)) {
    if (flip) {
      flip_sign_bits(bytes, out, result.size());
    } else {
      std::memcpy(out, bytes, result.size());
    }
    return result;
  }
  assert(shape.size() == 4 && "eight_bit_in_layout: channels-last needs a 4-D shape");
  transpose_batches(bytes, out, shape[0], shape[1], shape[2] * shape[3], nullptr, flip ? 0x80 : 0);
  return result;
}

}  // namespace collage::xnnpack
