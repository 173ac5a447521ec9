// Axis-offset copies: data movement where each output axis maps on its own.
//
// Transpose, Slice, Expand, Tile and Pad all move data so that the output
// element at coordinate (i0, ..., ir) is the input element at offset
// offsets[0][i0] + ... + offsets[r][ir]: each output axis contributes an
// independent term (a permuted stride, a stepped start, a 0 for a repeated
// axis, a reflected index). Written that way they share one loop, which
// copies whole rows with memcpy when the innermost axis is contiguous. An
// entry of kOutside marks a coordinate outside the input (Pad's border),
// which takes a fill value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace collage::native {

// A table entry for a coordinate that reads no input element. Far below any
// sum of real offsets, so a sum containing it stays negative.
inline constexpr std::int64_t kOutside = -(std::int64_t{1} << 60);

// Copies elements of `element_size` bytes from `in` to `out`, whose shape is
// given by the table sizes: out[i0, ..., ir] = in[sum_d offsets[d][i_d]], or
// *fill where the sum is negative (fill may be null when no entry is
// kOutside). Rank 0 (no tables) copies one element.
void axis_copy(const void* in, void* out, std::size_t element_size,
               const std::vector<std::vector<std::int64_t>>& offsets, const void* fill,
               int threads);

}  // namespace collage::native
