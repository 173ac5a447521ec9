// The permutation of an ONNX Transpose, read once for every reader of it
// (the graph passes, the backends that lower it).
#pragma once

#include <cstdint>
#include <vector>

#include "collage/ir/graph.h"

namespace collage {

// The perm of Transpose `node` (output axis i is input axis perm[i];
// default: the input's axes reversed) when it is a permutation of its
// input's axes; empty when it is not.
std::vector<std::int64_t> transpose_permutation(const Graph& graph, const Node& node);

}  // namespace collage
