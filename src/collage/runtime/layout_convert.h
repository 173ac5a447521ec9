// Converting a 4-D tensor between edge layouts (backends/backend.h's
// EdgeLayout) with the tiled transposes of ir/block_transpose.h: the
// conversion of every backend without one of its own (native's kernels at
// their edges, and what the search charges for them, cost/boundary_costs.h).
#pragma once

#include "collage/backends/backend.h"

namespace collage {

// Converts the [N,C,H,W] tensor of `type` at `src`, stored in `from`, into
// `to` at `dst` (which must not overlap `src`), at `threads` threads. Both
// layouts must fit `type` (edge_layout_fits). Between two layouts that are
// not plain, the value goes through plain in a buffer of its own.
void convert_edge_layout(const TensorType& type, const void* src, EdgeLayout from, void* dst,
                         EdgeLayout to, int threads);

}  // namespace collage
