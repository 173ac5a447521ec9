// Chains of shape-only ops collapse into one Reshape; no-op reshapes go.
//
// Reshape, Flatten, Squeeze and Unsqueeze only relabel the dimensions of a
// row-major buffer, so a chain of them is one Reshape to the last shape, and
// one whose output shape equals its input shape does nothing. Exporters
// write such chains around attention heads and classifier heads (Flatten
// after a Reshape, Unsqueeze then Squeeze); each link costs a copy in a
// backend that cannot alias buffers, and a boundary when the search puts its
// neighbours on different backends. The canonical graph has static shapes,
// so every Reshape this pass writes has a constant target shape.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

// Rewrites each shape-only op whose input comes from another shape-only op
// into a Reshape of that op's input, and removes shape-only ops that keep
// their input's shape. Prunes when anything changed. Returns the number of
// nodes removed.
int collapse_reshapes(Graph& graph);

}  // namespace collage
