// Transposes of transposes: one Transpose, or none when they cancel.
//
// Layout conversions come in pairs in exported graphs (NHWC <-> NCHW around
// a block written for the other layout, the head split and merge of
// attention when the reshape between them folded away). Two transposes in a
// row are one transpose by the composed permutation, and nothing at all when
// that is the identity.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

// Rewrites each Transpose of a Transpose's output into one Transpose of the
// first one's input, or removes it when the permutations cancel. Prunes when
// anything changed. Returns the number of nodes removed.
int cancel_transposes(Graph& graph);

}  // namespace collage
