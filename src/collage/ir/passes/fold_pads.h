// Folding a zero Pad into the Conv or AveragePool that reads it.
//
// PyTorch exports avg_pool2d with padding and count_include_pad=True (its
// default) as a Pad of zeros followed by an AveragePool without pads, and
// converters from other frameworks write "same" padding as an explicit Pad
// before a Conv. Left alone, each such Pad is a pass over the tensor of its
// own that, for the search, is one more node to place, and on a backend that
// computes in a blocked layout it is worse: the backends that run Pad run it
// in the plain layout, so the Pad's input and output change layout family
// twice around it (torchvision's Inception v3 has nine, one per block whose
// pooling branch reads the block's input, so the blocks' outputs stayed
// plain). Zero padding is what a Conv's pads and an AveragePool's pads with
// count_include_pad = 1 mean, so the Pad's spatial pads add to theirs.
// ONNX Runtime's PadFusion makes the same rewrite.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

// For every reader of a Pad's output that is a Conv or an AveragePool and can
// take the Pad's padding as its own, makes it read the Pad's input with the
// pads added. The Pad must be mode "constant" with value 0, with constant,
// non-negative pads on the spatial axes only. The Conv or AveragePool must
// have auto_pad NOTSET or VALID; the AveragePool must have ceil_mode = 0 and
// count_include_pad = 1 or no pads of its own (it then counts the pads). A
// Pad that nothing reads any more is pruned. Returns the number of readers
// rewritten.
int fold_pads(Graph& graph);

}  // namespace collage
