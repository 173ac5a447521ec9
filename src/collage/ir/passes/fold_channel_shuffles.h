// Channel shuffles as Gathers.
//
// ShuffleNet's channel shuffle is spelled as a Reshape that splits the
// channel axis in two (groups, channels per group), a Transpose that swaps
// the two and a Reshape that merges them again; a Slice then takes each half
// of the result. The three are one permutation of the channels, and a Slice
// of a permutation is a selection of them: each is a Gather along that axis
// with constant indices. A Gather of channels is one op on the 4-D tensor,
// which native runs on the channels-last and blocked layouts its neighbours
// store it in (backends/native/layout_ops.h), where the 5-D Reshape and
// Transpose make every plan convert the tensor to plain and back.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

struct ChannelShuffleFolds {
  // Reshape -> Transpose -> Reshape chains that became one Gather.
  int shuffles = 0;
  // Slices of a Gather along its axis that became a Gather of the source.
  int slices = 0;
};

// Rewrites each Reshape -> Transpose -> Reshape of static shapes that
// splits one axis into two, swaps them and merges them back into a Gather
// along that axis, and each Slice (constant starts, ends, axes and steps,
// along that axis only) of a Gather of constant 1-D indices into a Gather
// of the indices it keeps. Prunes when anything changed.
ChannelShuffleFolds fold_channel_shuffles(Graph& graph);

}  // namespace collage
