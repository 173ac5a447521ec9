#include "collage/backends/native/conv_winograd.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "collage/backends/native/layout_ops.h"
#include "collage/backends/native/sgemm.h"

namespace collage::native {
namespace {

constexpr std::int64_t kOut = 4;  // outputs per tile side
constexpr std::int64_t kIn = 6;   // inputs per tile side
constexpr std::int64_t kPositions = kIn * kIn;
constexpr std::int64_t kLanes = 8;

// Floats the transformed inputs and products of one chunk of tiles may
// take (both together): 4 MiB, so that they stay in the last-level cache
// between the transforms and the matrix products.
constexpr std::int64_t kChunkFloats = std::int64_t{1} << 20;

// The tiles of one image: `rows` x `cols` blocks of 4x4 outputs, each read
// from the 6x6 inputs starting 4 rows and columns after the one before.
struct Tiling {
  std::int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  std::int64_t pad_top = 0, pad_left = 0;
  std::int64_t rows = 0, cols = 0;
  std::int64_t count() const { return rows * cols; }
  // Floats per row of a chunk's padded input plane: the columns the tiles
  // read, and room for the last tile's loads of eight tiles' columns.
  std::int64_t plane_width() const { return cols * kOut + 2 + kLanes * kOut; }
};

Tiling tiling_of(const ConvShape& shape) {
  const WindowAxis& ah = shape.window[1];
  const WindowAxis& aw = shape.window[2];
  Tiling t;
  t.in_h = ah.input;
  t.in_w = aw.input;
  t.out_h = ah.output;
  t.out_w = aw.output;
  t.pad_top = ah.pad_begin;
  t.pad_left = aw.pad_begin;
  t.rows = (t.out_h + kOut - 1) / kOut;
  t.cols = (t.out_w + kOut - 1) / kOut;
  return t;
}

// Tiles per chunk: a multiple of 8 (one vector of tiles), at least 32 so
// that the matrix products stay efficient, and no more than the image has.
std::int64_t chunk_tiles(std::int64_t channels, std::int64_t out_channels, std::int64_t tiles) {
  std::int64_t chunk = kChunkFloats / (kPositions * (channels + out_channels));
  chunk = std::clamp<std::int64_t>(chunk / kLanes * kLanes, 32, 512);
  const std::int64_t all = (tiles + kLanes - 1) / kLanes * kLanes;
  return std::min(chunk, all);
}

// r = B^T d for one column of six inputs (the input transform's matrix).
inline void input_1d(const __m256 d[kIn], __m256 r[kIn]) {
  const __m256 two = _mm256_set1_ps(2.0f);
  const __m256 four = _mm256_set1_ps(4.0f);
  const __m256 minus_five = _mm256_set1_ps(-5.0f);
  r[0] = _mm256_fmadd_ps(four, d[0], _mm256_fmadd_ps(minus_five, d[2], d[4]));
  r[1] = _mm256_fnmadd_ps(four, _mm256_add_ps(d[1], d[2]), _mm256_add_ps(d[3], d[4]));
  r[2] = _mm256_fmadd_ps(four, _mm256_sub_ps(d[1], d[2]), _mm256_sub_ps(d[4], d[3]));
  const __m256 even = _mm256_sub_ps(d[4], d[2]);
  const __m256 odd = _mm256_mul_ps(two, _mm256_sub_ps(d[3], d[1]));
  r[3] = _mm256_add_ps(even, odd);
  r[4] = _mm256_sub_ps(even, odd);
  r[5] = _mm256_fmadd_ps(four, d[1], _mm256_fmadd_ps(minus_five, d[3], d[5]));
}

// r = A^T m for one column of six products (the output transform's matrix).
inline void output_1d(const __m256 m[kIn], __m256 r[kOut]) {
  const __m256 sum12 = _mm256_add_ps(m[1], m[2]);
  const __m256 diff12 = _mm256_sub_ps(m[1], m[2]);
  const __m256 sum34 = _mm256_add_ps(m[3], m[4]);
  const __m256 diff34 = _mm256_sub_ps(m[3], m[4]);
  r[0] = _mm256_add_ps(_mm256_add_ps(m[0], sum12), sum34);
  r[1] = _mm256_fmadd_ps(_mm256_set1_ps(2.0f), diff34, diff12);
  r[2] = _mm256_fmadd_ps(_mm256_set1_ps(4.0f), sum34, sum12);
  r[3] = _mm256_add_ps(_mm256_fmadd_ps(_mm256_set1_ps(8.0f), diff34, diff12), m[5]);
}

// The column pass of the input transform over rows[i] = B^T of input row
// i, stored v[p * position_stride] for each position p = i * 6 + m.
inline void store_input_columns(__m256 rows[kIn][kIn], float* v, std::int64_t position_stride) {
  for (std::int64_t m = 0; m < kIn; ++m) {
    __m256 column[kIn];
    __m256 r[kIn];
    for (std::int64_t i = 0; i < kIn; ++i) column[i] = rows[i][m];
    input_1d(column, r);
    for (std::int64_t i = 0; i < kIn; ++i) {
      _mm256_storeu_ps(v + (i * kIn + m) * position_stride, r[i]);
    }
  }
}

// The row pass of the output transform: rows[i] = A^T of the products
// m[p * position_stride] of positions p = i * 6 + j.
inline void load_output_rows(const float* m, std::int64_t position_stride, __m256 rows[kIn][kOut]) {
  for (std::int64_t i = 0; i < kIn; ++i) {
    __m256 products[kIn];
    for (std::int64_t j = 0; j < kIn; ++j) {
      products[j] = _mm256_loadu_ps(m + (i * kIn + j) * position_stride);
    }
    output_1d(products, rows[i]);
  }
}

// The rows of G x for a column x = (x0, x1, x2) of weights (the weight
// transform's matrix), for floats and for vectors of eight channels alike.
template <typename T, typename Add, typename Sub, typename Mul>
void weight_1d(T x0, T x1, T x2, T out[kIn], Add add, Sub sub, Mul mul) {
  const T outer = add(x0, x2);
  const T mid = mul(x1, 1.0f / 12.0f);
  const T ends = add(mul(x0, 1.0f / 24.0f), mul(x2, 1.0f / 6.0f));
  out[0] = mul(x0, 0.25f);
  out[1] = mul(add(outer, x1), -1.0f / 6.0f);
  out[2] = mul(sub(outer, x1), -1.0f / 6.0f);
  out[3] = add(ends, mid);
  out[4] = sub(ends, mid);
  out[5] = x2;
}

// out[i * 6 + m] = (G g G^T)[i][m] for 3x3 weights g (row-major).
template <typename T, typename Add, typename Sub, typename Mul>
void weight_2d(const T g[9], T out[kPositions], Add add, Sub sub, Mul mul) {
  T gg[3][kIn];  // column j of G g
  for (int j = 0; j < 3; ++j) weight_1d(g[j], g[3 + j], g[6 + j], gg[j], add, sub, mul);
  for (int i = 0; i < kIn; ++i)
    weight_1d(gg[0][i], gg[1][i], gg[2][i], out + i * kIn, add, sub, mul);
}

// u[p][k][c] = (G g G^T)[p] for output channel k and every input channel,
// g being that pair's 3x3 weights; eight input channels at a time.
void transform_weights(const float* w, std::int64_t k, std::int64_t channels,
                       std::int64_t out_channels, float* u) {
  const std::int64_t stride = out_channels * channels;
  float* row = u + k * channels;
  std::int64_t c = 0;
  const __m256i nine = _mm256_setr_epi32(0, 9, 18, 27, 36, 45, 54, 63);
  for (; c + kLanes <= channels; c += kLanes) {
    const float* g = w + (k * channels + c) * 9;
    __m256 taps[9];
    for (int t = 0; t < 9; ++t) taps[t] = _mm256_i32gather_ps(g + t, nine, 4);
    __m256 out[kPositions];
    weight_2d(
        taps, out, [](__m256 a, __m256 b) { return _mm256_add_ps(a, b); },
        [](__m256 a, __m256 b) { return _mm256_sub_ps(a, b); },
        [](__m256 a, float b) { return _mm256_mul_ps(a, _mm256_set1_ps(b)); });
    for (std::int64_t p = 0; p < kPositions; ++p) _mm256_storeu_ps(row + p * stride + c, out[p]);
  }
  for (; c < channels; ++c) {
    float out[kPositions];
    weight_2d(
        w + (k * channels + c) * 9, out, [](float a, float b) { return a + b; },
        [](float a, float b) { return a - b; }, [](float a, float b) { return a * b; });
    for (std::int64_t p = 0; p < kPositions; ++p) row[p * stride + c] = out[p];
  }
}

// u = every output channel's weights transformed ([36][K][C]).
void transform_all_weights(const float* w, std::int64_t channels, std::int64_t out_channels,
                           float* u, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t k = 0; k < out_channels; ++k) {
    transform_weights(w, k, channels, out_channels, u);
  }
}

// The weights as the products take them: `transformed` when the kernel
// prepared them, else w transformed into this thread's scratch.
const float* weights_for(const float* w, std::int64_t channels, std::int64_t out_channels,
                         const float* transformed, int threads) {
  if (transformed != nullptr) return transformed;
  static thread_local ScratchBuffer buffer;
  float* const u = buffer.get(kPositions * out_channels * channels);
  transform_all_weights(w, channels, out_channels, u, threads);
  return u;
}

// One chunk of tiles, [first, first + count) of one image.
struct Chunk {
  std::int64_t first = 0;
  std::int64_t count = 0;
  std::int64_t stride = 0;      // floats between positions' rows of tiles
  std::int64_t top_row = 0;     // the first tile row it touches
  std::int64_t plane_rows = 0;  // rows of its padded input plane
};

// Calls f(index, ty, tx, n) for each run of at most eight tiles of the
// chunk that lie in one tile row: `index` is the run's first tile in the
// chunk, (ty, tx) its place, n its length. A run's vector of eight lanes
// may spill past n into the next run's columns, which that run then
// writes, or into the row's slack (Chunk::stride leaves eight columns).
template <typename F>
void for_each_run(const Tiling& t, const Chunk& chunk, F f) {
  for (std::int64_t index = 0; index < chunk.count;) {
    const std::int64_t tile = chunk.first + index;
    const std::int64_t ty = tile / t.cols;
    const std::int64_t tx = tile % t.cols;
    const std::int64_t n = std::min({kLanes, t.cols - tx, chunk.count - index});
    f(index, ty, tx, n);
    index += n;
  }
}

// Copies the input rows `chunk` reads of one channel into `plane`, zeros
// where the window reaches past the image.
void load_plane(const Tiling& t, const Chunk& chunk, const float* image, float* plane) {
  const std::int64_t width = t.plane_width();
  for (std::int64_t r = 0; r < chunk.plane_rows; ++r) {
    float* dst = plane + r * width;
    const std::int64_t y = chunk.top_row * kOut + r - t.pad_top;
    if (y < 0 || y >= t.in_h) {
      std::fill(dst, dst + width, 0.0f);
      continue;
    }
    const float* src = image + y * t.in_w;
    const std::int64_t left = std::min(t.pad_left, width);
    std::fill(dst, dst + left, 0.0f);
    const std::int64_t copied = std::clamp<std::int64_t>(width - left, 0, t.in_w);
    std::copy(src, src + copied, dst + left);
    std::fill(dst + left + copied, dst + width, 0.0f);
  }
}

// Splits 32 consecutive floats, eight tiles' four columns each, into
// q[j][l] = from[4 l + j]: tile l's column j in lane l.
inline void deinterleave_columns(const float* from, __m256 q[kOut]) {
  const __m256 a = _mm256_loadu_ps(from);
  const __m256 b = _mm256_loadu_ps(from + 8);
  const __m256 c = _mm256_loadu_ps(from + 16);
  const __m256 d = _mm256_loadu_ps(from + 24);
  const __m256 x0 = _mm256_permute2f128_ps(a, c, 0x20);  // tiles 0 and 4
  const __m256 x1 = _mm256_permute2f128_ps(a, c, 0x31);  // tiles 1 and 5
  const __m256 x2 = _mm256_permute2f128_ps(b, d, 0x20);  // tiles 2 and 6
  const __m256 x3 = _mm256_permute2f128_ps(b, d, 0x31);  // tiles 3 and 7
  const __m256 t0 = _mm256_unpacklo_ps(x0, x1);
  const __m256 t1 = _mm256_unpackhi_ps(x0, x1);
  const __m256 t2 = _mm256_unpacklo_ps(x2, x3);
  const __m256 t3 = _mm256_unpackhi_ps(x2, x3);
  q[0] = _mm256_shuffle_ps(t0, t2, 0x44);
  q[1] = _mm256_shuffle_ps(t0, t2, 0xEE);
  q[2] = _mm256_shuffle_ps(t1, t3, 0x44);
  q[3] = _mm256_shuffle_ps(t1, t3, 0xEE);
}

// v[p][c][tile] = (B^T d B)[p] for channel c's every tile of the chunk,
// from its padded plane, eight tiles of a row at a time.
void transform_input(const Tiling& t, const Chunk& chunk, const float* plane, std::int64_t c,
                     std::int64_t channels, float* v) {
  const std::int64_t width = t.plane_width();
  for_each_run(t, chunk, [&](std::int64_t index, std::int64_t ty, std::int64_t tx, std::int64_t) {
    const float* block = plane + (ty - chunk.top_row) * kOut * width + tx * kOut;
    __m256 rows[kIn][kIn];
    for (std::int64_t i = 0; i < kIn; ++i) {
      __m256 d[kIn];
      __m256 next[kOut];
      deinterleave_columns(block + i * width, d);
      deinterleave_columns(block + i * width + kOut, next);
      d[4] = next[0];
      d[5] = next[1];
      input_1d(d, rows[i]);
    }
    store_input_columns(rows, v + c * chunk.stride + index, channels * chunk.stride);
  });
}

// Stores row `a` of eight horizontally adjacent 4x4 tiles (four vectors,
// one per column, a lane per tile) as 32 consecutive floats.
inline void store_row_of_tiles(const __m256 col[kOut], float* out) {
  const __m256 t0 = _mm256_unpacklo_ps(col[0], col[1]);
  const __m256 t1 = _mm256_unpackhi_ps(col[0], col[1]);
  const __m256 t2 = _mm256_unpacklo_ps(col[2], col[3]);
  const __m256 t3 = _mm256_unpackhi_ps(col[2], col[3]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44);  // tiles 0 and 4
  const __m256 u1 = _mm256_shuffle_ps(t0, t2, 0xEE);  // tiles 1 and 5
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44);  // tiles 2 and 6
  const __m256 u3 = _mm256_shuffle_ps(t1, t3, 0xEE);  // tiles 3 and 7
  _mm256_storeu_ps(out, _mm256_permute2f128_ps(u0, u1, 0x20));
  _mm256_storeu_ps(out + 8, _mm256_permute2f128_ps(u2, u3, 0x20));
  _mm256_storeu_ps(out + 16, _mm256_permute2f128_ps(u0, u1, 0x31));
  _mm256_storeu_ps(out + 24, _mm256_permute2f128_ps(u2, u3, 0x31));
}

// y[k] over the chunk's tiles = A^T m A + bias, from the products m,
// eight tiles of a row at a time.
void transform_output(const Tiling& t, const Chunk& chunk, const float* m, std::int64_t k,
                      std::int64_t out_channels, float bias, float* y) {
  const __m256 b = _mm256_set1_ps(bias);
  for_each_run(t, chunk, [&](std::int64_t index, std::int64_t ty, std::int64_t tx, std::int64_t n) {
    __m256 rows[kIn][kOut];
    load_output_rows(m + k * chunk.stride + index, out_channels * chunk.stride, rows);
    const std::int64_t height = std::min(kOut, t.out_h - ty * kOut);
    const std::int64_t columns = std::min(n * kOut, t.out_w - tx * kOut);
    __m256 out[kOut][kOut];  // [row][column], a lane per tile
    for (std::int64_t col = 0; col < kOut; ++col) {
      __m256 column[kIn];
      __m256 r[kOut];
      for (std::int64_t i = 0; i < kIn; ++i) column[i] = rows[i][col];
      output_1d(column, r);
      for (std::int64_t a = 0; a < kOut; ++a) out[a][col] = _mm256_add_ps(r[a], b);
    }
    alignas(32) float partial[kOut][kLanes * kOut];
    const bool whole = columns == kLanes * kOut;
    for (std::int64_t a = 0; a < height; ++a) {
      float* row = y + (ty * kOut + a) * t.out_w + tx * kOut;
      if (whole) {
        store_row_of_tiles(out[a], row);
        continue;
      }
      store_row_of_tiles(out[a], partial[a]);
      std::copy(partial[a], partial[a] + columns, row);
    }
  });
}

// A tensor of `channels` stored [N * channels / lanes, H, W, lanes]
// (layout_ops.h): where channel c's pixel (y, x) of image n lies.
struct Lanes {
  const std::int64_t channels, lanes, height, width;
  std::int64_t at(std::int64_t n, std::int64_t c, std::int64_t y, std::int64_t x) const {
    return (((n * (channels / lanes) + c / lanes) * height + y) * width + x) * lanes + c % lanes;
  }
};

// v[p][tile][c..c+8) = (B^T d B)[p] for eight channels of one tile, read
// where they lie (zeros past the image).
void transform_input_lanes(const Tiling& t, const Lanes& in, const float* x, std::int64_t n,
                           std::int64_t ty, std::int64_t tx, std::int64_t c, float* v,
                           std::int64_t position_stride) {
  const std::int64_t y0 = ty * kOut - t.pad_top;
  const std::int64_t x0 = tx * kOut - t.pad_left;
  __m256 rows[kIn][kIn];
  for (std::int64_t i = 0; i < kIn; ++i) {
    __m256 d[kIn];
    const std::int64_t y = y0 + i;
    for (std::int64_t j = 0; j < kIn; ++j) {
      const std::int64_t xx = x0 + j;
      const bool inside = y >= 0 && y < t.in_h && xx >= 0 && xx < t.in_w;
      d[j] = inside ? _mm256_loadu_ps(x + in.at(n, c, y, xx)) : _mm256_setzero_ps();
    }
    input_1d(d, rows[i]);
  }
  store_input_columns(rows, v, position_stride);
}

// y's eight channels [k, k + 8) of one tile = A^T m A + bias, from the
// products m[p][tile][k..k+8), stored where they lie.
void transform_output_lanes(const Tiling& t, const Lanes& out, const float* m,
                            std::int64_t position_stride, const float* bias, std::int64_t n,
                            std::int64_t ty, std::int64_t tx, std::int64_t k, float* y) {
  __m256 rows[kIn][kOut];
  load_output_rows(m, position_stride, rows);
  const __m256 b = bias != nullptr ? _mm256_loadu_ps(bias + k) : _mm256_setzero_ps();
  for (std::int64_t col = 0; col < kOut; ++col) {
    const std::int64_t xx = tx * kOut + col;
    if (xx >= t.out_w) break;
    __m256 column[kIn];
    __m256 r[kOut];
    for (std::int64_t i = 0; i < kIn; ++i) column[i] = rows[i][col];
    output_1d(column, r);
    for (std::int64_t a = 0; a < kOut && ty * kOut + a < t.out_h; ++a) {
      _mm256_storeu_ps(y + out.at(n, k, ty * kOut + a, xx), _mm256_add_ps(r[a], b));
    }
  }
}

}  // namespace

bool winograd_fits(const ConvShape& shape) {
  const WindowAxis& ad = shape.window[0];
  const WindowAxis& ah = shape.window[1];
  const WindowAxis& aw = shape.window[2];
  if (ad.input != 1 || ad.output != 1 || ad.kernel != 1) return false;
  for (const WindowAxis* axis : {&ah, &aw}) {
    if (axis->kernel != 3 || axis->stride != 1 || axis->dilation != 1) return false;
  }
  if (shape.groups != 1) return false;
  // Few channels leave the products too small to pay for the transforms,
  // few tiles leave them mostly padding.
  const Tiling t = tiling_of(shape);
  return shape.channels >= 16 && shape.out_channels >= 16 && t.count() >= 16;
}

namespace {

// The static shape of a 2-D Conv node with unit strides and dilations, the
// only ones Winograd takes; none for others.
std::optional<ConvShape> unit_stride_shape(const Graph& graph, const Node& node) {
  if (node.op_type != "Conv" || node.inputs.size() < 2 || node.outputs.size() != 1) return {};
  const Shape& x = graph.type(node.input(0)).shape;
  const Shape& w = graph.type(node.input(1)).shape;
  const Shape& y = graph.type(node.outputs[0]).shape;
  if (x.size() != 4 || w.size() != 4 || y.size() != 4) return {};
  const std::vector<std::int64_t> ones = {1, 1};
  if (node.attributes.get_ints("strides", ones) != ones ||
      node.attributes.get_ints("dilations", ones) != ones) {
    return {};
  }
  ConvShape shape;
  shape.batch = x[0];
  shape.channels = x[1];
  shape.out_channels = y[1];
  shape.groups = node.attributes.get_int("group", 1);
  for (int axis = 0; axis < 2; ++axis) {
    WindowAxis& window = shape.window[static_cast<std::size_t>(1 + axis)];
    window.input = x[static_cast<std::size_t>(2 + axis)];
    window.output = y[static_cast<std::size_t>(2 + axis)];
    window.kernel = w[static_cast<std::size_t>(2 + axis)];
  }
  return shape;
}

}  // namespace

bool winograd_fits(const Graph& graph, const Node& node) {
  const std::optional<ConvShape> shape = unit_stride_shape(graph, node);
  return shape && winograd_fits(*shape);
}

bool winograd_in_layout_fits(const Graph& graph, const Node& node, EdgeLayout layout) {
  const std::optional<ConvShape> shape = unit_stride_shape(graph, node);
  return shape && winograd_in_lanes_fits(*shape, layout_lanes(layout, shape->channels),
                                         layout_lanes(layout, shape->out_channels));
}

std::vector<float> winograd_weights(const Tensor& weights, int threads) {
  const std::int64_t out_channels = weights.shape()[0];
  const std::int64_t channels = weights.shape()[1];
  std::vector<float> u(static_cast<std::size_t>(kPositions * out_channels * channels));
  transform_all_weights(weights.data<float>(), channels, out_channels, u.data(), threads);
  return u;
}

void run_winograd(const ConvShape& shape, const float* x, const float* w, const float* bias,
                  float* y, int threads, const float* transformed) {
  const std::int64_t channels = shape.channels;
  const std::int64_t out_channels = shape.out_channels;
  const Tiling t = tiling_of(shape);
  const std::int64_t tiles = t.count();
  const std::int64_t capacity = chunk_tiles(channels, out_channels, tiles);
  const std::int64_t stride = capacity + kLanes;
  const std::int64_t width = t.plane_width();
  const std::int64_t max_plane_rows = ((capacity + t.cols - 1) / t.cols + 1) * kOut + 2;
  const float* const weights = weights_for(w, channels, out_channels, transformed, threads);
  static thread_local ScratchBuffer v_buffer, m_buffer;
  float* const v = v_buffer.get(kPositions * channels * stride);
  float* const m = m_buffer.get(kPositions * out_channels * stride);
#pragma omp parallel num_threads(threads)
  {
    static thread_local ScratchBuffer plane_buffer;
    float* const plane = plane_buffer.get(max_plane_rows * width);
    for (std::int64_t n = 0; n < shape.batch; ++n) {
      const float* image = x + n * channels * t.in_h * t.in_w;
      float* out = y + n * out_channels * t.out_h * t.out_w;
      for (std::int64_t first = 0; first < tiles; first += capacity) {
        Chunk chunk;
        chunk.first = first;
        chunk.count = std::min(capacity, tiles - first);
        chunk.stride = stride;
        chunk.top_row = first / t.cols;
        chunk.plane_rows = ((first + chunk.count - 1) / t.cols - chunk.top_row) * kOut + kIn;
#pragma omp for schedule(static)
        for (std::int64_t c = 0; c < channels; ++c) {
          load_plane(t, chunk, image + c * t.in_h * t.in_w, plane);
          transform_input(t, chunk, plane, c, channels, v);
        }
#pragma omp for schedule(dynamic, 1)
        for (std::int64_t p = 0; p < kPositions; ++p) {
          sgemm(out_channels, chunk.count, channels,
                SgemmMatrix{weights + p * out_channels * channels, channels, false},
                SgemmMatrix{v + p * channels * stride, stride, false},
                SgemmOutput{m + p * out_channels * stride, stride, 1.0f, 0.0f, nullptr, nullptr},
                1);
        }
#pragma omp for schedule(static)
        for (std::int64_t k = 0; k < out_channels; ++k) {
          transform_output(t, chunk, m, k, out_channels, bias != nullptr ? bias[k] : 0.0f,
                           out + k * t.out_h * t.out_w);
        }
      }
    }
  }
}

bool winograd_in_lanes_fits(const ConvShape& shape, std::int64_t in_lanes, std::int64_t out_lanes) {
  return winograd_fits(shape) && shape.channels % kLanes == 0 && shape.out_channels % kLanes == 0 &&
         in_lanes % kLanes == 0 && out_lanes % kLanes == 0;
}

void run_winograd_in_lanes(const ConvShape& shape, const float* x, std::int64_t in_lanes,
                           const float* w, const float* bias, float* y, std::int64_t out_lanes,
                           int threads, const float* transformed,
                           std::span<const ElementwiseFn> epilogue) {
  const std::int64_t channels = shape.channels;
  const std::int64_t out_channels = shape.out_channels;
  const Tiling t = tiling_of(shape);
  const Lanes in{channels, in_lanes, t.in_h, t.in_w};
  const Lanes out{out_channels, out_lanes, t.out_h, t.out_w};
  const std::int64_t tiles = t.count();
  const std::int64_t capacity = chunk_tiles(channels, out_channels, tiles);
  const float* const weights = weights_for(w, channels, out_channels, transformed, threads);
  static thread_local ScratchBuffer v_buffer, m_buffer;
  // Per position, a [tiles x channels] matrix of transformed inputs and a
  // [tiles x out_channels] one of products.
  float* const v = v_buffer.get(kPositions * capacity * channels);
  float* const m = m_buffer.get(kPositions * capacity * out_channels);
  const std::int64_t output_size = shape.batch * out_channels * t.out_h * t.out_w;
#pragma omp parallel num_threads(threads)
  {
    for (std::int64_t n = 0; n < shape.batch; ++n) {
      for (std::int64_t first = 0; first < tiles; first += capacity) {
        const std::int64_t count = std::min(capacity, tiles - first);
#pragma omp for schedule(static)
        for (std::int64_t tile = 0; tile < count; ++tile) {
          const std::int64_t ty = (first + tile) / t.cols;
          const std::int64_t tx = (first + tile) % t.cols;
          for (std::int64_t c = 0; c < channels; c += kLanes) {
            transform_input_lanes(t, in, x, n, ty, tx, c, v + tile * channels + c,
                                  capacity * channels);
          }
        }
#pragma omp for schedule(dynamic, 1)
        for (std::int64_t p = 0; p < kPositions; ++p) {
          // The weights are [K x C] per position: op(B) is their transpose.
          sgemm(count, out_channels, channels,
                SgemmMatrix{v + p * capacity * channels, channels, false},
                SgemmMatrix{weights + p * out_channels * channels, channels, true},
                SgemmOutput{m + p * capacity * out_channels, out_channels, 1.0f, 0.0f, nullptr,
                            nullptr},
                1);
        }
#pragma omp for schedule(static)
        for (std::int64_t tile = 0; tile < count; ++tile) {
          const std::int64_t ty = (first + tile) / t.cols;
          const std::int64_t tx = (first + tile) % t.cols;
          for (std::int64_t k = 0; k < out_channels; k += kLanes) {
            transform_output_lanes(t, out, m + tile * out_channels + k, capacity * out_channels,
                                   bias, n, ty, tx, k, y);
          }
        }
      }
    }
    // The epilogue's unary ops, elementwise, so in any layout.
    if (!epilogue.empty()) {
      constexpr std::int64_t kBlock = 4096;
#pragma omp for schedule(static)
      for (std::int64_t start = 0; start < output_size; start += kBlock) {
        const std::int64_t length = std::min(kBlock, output_size - start);
        for (const ElementwiseFn& fn : epilogue) {
          fn.unary(y + start, 1, y + start, length, fn.params);
        }
      }
    }
  }
}

}  // namespace collage::native
