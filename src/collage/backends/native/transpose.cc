#include "collage/backends/native/transpose.h"

#include <algorithm>
#include <vector>

#include "collage/backends/native/axis_copy.h"
#include "collage/backends/native/broadcast.h"
#include "collage/ir/block_transpose.h"

namespace collage::native {
namespace {

constexpr std::int64_t kTile = 16;

// The transpose with axes of one dropped and neighbours merged.
struct Reduced {
  std::vector<std::int64_t> shape;  // input axes
  std::vector<std::size_t> perm;    // output axis i is input axis perm[i]
};

Reduced reduce(const Shape& in_shape, std::span<const std::size_t> perm) {
  // Input axes kept (extent above one), renumbered in order.
  std::vector<std::int64_t> kept_index(in_shape.size(), -1);
  std::vector<std::int64_t> kept_shape;
  for (std::size_t d = 0; d < in_shape.size(); ++d) {
    if (in_shape[d] == 1) continue;
    kept_index[d] = static_cast<std::int64_t>(kept_shape.size());
    kept_shape.push_back(in_shape[d]);
  }
  std::vector<std::size_t> kept_perm;
  for (std::size_t axis : perm) {
    if (kept_index[axis] >= 0) kept_perm.push_back(static_cast<std::size_t>(kept_index[axis]));
  }
  // Merge output neighbours that are input neighbours in the same order:
  // each group of input axes becomes one.
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < kept_perm.size(); ++i) {
    if (i > 0 && kept_perm[i] == kept_perm[i - 1] + 1) {
      groups.back().push_back(kept_perm[i]);
    } else {
      groups.push_back({kept_perm[i]});
    }
  }
  // Number the groups in input order.
  std::vector<std::size_t> by_input(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) by_input[g] = g;
  std::sort(by_input.begin(), by_input.end(),
            [&](std::size_t a, std::size_t b) { return groups[a][0] < groups[b][0]; });
  Reduced reduced;
  reduced.perm.resize(groups.size());
  for (std::size_t rank = 0; rank < by_input.size(); ++rank) {
    std::int64_t extent = 1;
    for (std::size_t axis : groups[by_input[rank]]) extent *= kept_shape[axis];
    reduced.shape.push_back(extent);
    reduced.perm[by_input[rank]] = rank;
  }
  return reduced;
}

// One tile: input rows c0..c1 (each `row_in` apart, elements r0..r1 of
// each) to output rows r0..r1 (each `column_out` apart, elements c0..c1).
template <typename T>
void turn_tile(const T* in, T* out, std::int64_t r0, std::int64_t r1, std::int64_t c0,
               std::int64_t c1, std::int64_t row_in, std::int64_t column_out) {
#if defined(__AVX2__)
  if constexpr (sizeof(T) == 4) {
    if (r1 - r0 == kTile && c1 - c0 == kTile) {
      for (std::int64_t r = r0; r < r1; r += 8) {
        for (std::int64_t c = c0; c < c1; c += 8) {
          transpose_8x8(reinterpret_cast<const float*>(in + c * row_in + r), row_in,
                        reinterpret_cast<float*>(out + r * column_out + c), column_out);
        }
      }
      return;
    }
  }
#endif
  for (std::int64_t r = r0; r < r1; ++r) {
    const T* source = in + r;
    T* destination = out + r * column_out;
    for (std::int64_t c = c0; c < c1; ++c) destination[c] = source[c * row_in];
  }
}

// A batch of 2-D transposes: for each outer position, rows of `rows`
// contiguous input elements (input stride `row_in`) become columns of the
// output (output stride `column_out`) whose rows are `columns` long.
template <typename T>
void tiled(const T* in, T* out, const Reduced& t, int threads) {
  const std::size_t rank = t.shape.size();
  const std::size_t inner_in = rank - 1;  // input's innermost axis
  const std::size_t inner_out = t.perm[rank - 1];
  // The output position of the input's innermost axis.
  const auto at =
      static_cast<std::size_t>(std::find(t.perm.begin(), t.perm.end(), inner_in) - t.perm.begin());
  std::vector<std::int64_t> out_shape(rank);
  for (std::size_t i = 0; i < rank; ++i) out_shape[i] = t.shape[t.perm[i]];
  const std::vector<std::int64_t> in_strides = row_major_strides(t.shape);
  const std::vector<std::int64_t> out_strides = row_major_strides(out_shape);
  // Outer output axes: all but the two the tiles turn.
  std::vector<std::size_t> outer_axes;
  for (std::size_t i = 0; i < rank; ++i) {
    if (i != at && i != rank - 1) outer_axes.push_back(i);
  }
  std::int64_t outer = 1;
  for (std::size_t i : outer_axes) outer *= out_shape[i];
  const std::int64_t rows = t.shape[inner_in];      // contiguous in the input
  const std::int64_t columns = t.shape[inner_out];  // contiguous in the output
  const std::int64_t row_in = in_strides[inner_out];
  const std::int64_t column_out = out_strides[at];
  const std::int64_t row_tiles = (rows + kTile - 1) / kTile;
  const int team = threads_for(outer * rows * columns, threads);
#pragma omp parallel for collapse(2) num_threads(team) schedule(static) if (team > 1)
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t rt = 0; rt < row_tiles; ++rt) {
      std::int64_t in_base = 0;
      std::int64_t out_base = 0;
      std::int64_t rest = o;
      for (std::size_t k = outer_axes.size(); k-- > 0;) {
        const std::size_t axis = outer_axes[k];
        const std::int64_t index = rest % out_shape[axis];
        rest /= out_shape[axis];
        in_base += index * in_strides[t.perm[axis]];
        out_base += index * out_strides[axis];
      }
      const std::int64_t r0 = rt * kTile;
      const std::int64_t r1 = std::min(rows, r0 + kTile);
      for (std::int64_t c0 = 0; c0 < columns; c0 += kTile) {
        const std::int64_t c1 = std::min(columns, c0 + kTile);
        turn_tile(in + in_base, out + out_base, r0, r1, c0, c1, row_in, column_out);
      }
    }
  }
}

}  // namespace

void transpose(const void* in, void* out, std::size_t element_size, const Shape& in_shape,
               std::span<const std::size_t> perm, int threads) {
  const Reduced t = reduce(in_shape, perm);
  const std::size_t rank = t.shape.size();
  if (rank >= 2 && t.perm[rank - 1] != rank - 1) {
    switch (element_size) {
      case 1:
        return tiled(static_cast<const std::uint8_t*>(in), static_cast<std::uint8_t*>(out), t,
                     threads);
      case 2:
        return tiled(static_cast<const std::uint16_t*>(in), static_cast<std::uint16_t*>(out), t,
                     threads);
      case 4:
        return tiled(static_cast<const std::uint32_t*>(in), static_cast<std::uint32_t*>(out), t,
                     threads);
      case 8:
        return tiled(static_cast<const std::uint64_t*>(in), static_cast<std::uint64_t*>(out), t,
                     threads);
      default:
        break;
    }
  }
  // The innermost axis stays innermost (or odd element sizes): row copies.
  const std::vector<std::int64_t> strides = row_major_strides(t.shape);
  std::vector<std::vector<std::int64_t>> tables;
  for (std::size_t axis : t.perm) {
    std::vector<std::int64_t>& table = tables.emplace_back(static_cast<std::size_t>(t.shape[axis]));
    for (std::int64_t i = 0; i < t.shape[axis]; ++i) {
      table[static_cast<std::size_t>(i)] = i * strides[axis];
    }
  }
  axis_copy(in, out, element_size, tables, nullptr, threads);
}

}  // namespace collage::native
