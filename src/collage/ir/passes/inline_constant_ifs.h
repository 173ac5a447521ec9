// An If whose condition has folded to a constant becomes the branch it takes.
//
// Import already inlines an If whose condition is a weight or a Constant
// (onnx/constant_branches.h). Exporters also write conditions computed from
// shapes (`if x.dim() == 3:` in a scripted model becomes an If on
// Equal(Size(Shape(x)), 3)), which only folding makes constant, often
// inside another body; such an If's branches may even give outputs of
// different ranks, so it could not be typed as an If at all. This pass runs
// in canonicalization's folding rounds: the taken branch's nodes and
// weights join the graph in the If's place, reading the If's captured
// inputs, and its outputs take the If's values.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

// Returns the number of Ifs inlined. The graph is left topologically sorted.
int inline_constant_ifs(Graph& graph);

}  // namespace collage
