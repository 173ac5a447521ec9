// Transpose of a row-major tensor by a permutation of its axes.
//
// Axes of one element are dropped and axes that stay side by side in the
// same order are merged, so most transposes become a small one: NCHW to
// NHWC is [N, C, HW] by [0, 2, 1]. When the innermost axis stays innermost,
// every output row is a run of the input and axis_copy copies it. When it
// moves, each output row gathers the input with a stride: read and written
// element by element, one side misses the cache at every element (a
// 1024 x 1024 float transpose took 2.4 ms). Such a transpose runs as a
// batch of 2-D ones (the input's innermost axis against the output's) in
// tiles of 16 x 16 elements, whose 16 input lines and 16 output lines stay
// in the L1 cache while the tile is turned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "collage/ir/tensor_type.h"

namespace collage::native {

// out = in with its axes permuted: output axis i is input axis perm[i].
// `perm` must be a permutation of the input's axes.
void transpose(const void* in, void* out, std::size_t element_size, const Shape& in_shape,
               std::span<const std::size_t> perm, int threads);

}  // namespace collage::native
