// Removal of ops that pass their input through unchanged: Identity, and
// Dropout in inference mode.
//
// Exporters leave these behind (PyTorch emits Identity for aliased outputs
// and Dropout layers in eval mode); every backend would run them as copies
// and every candidate sub-graph would carry them. The readers of their
// output read their input instead. When the output is a graph output, the
// input value takes over the output's name, so the model's outputs keep the
// names users know; when that is impossible (the input is itself a graph
// input, output or constant), the node stays.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

// Removes every Identity node and every Dropout node that runs in inference
// mode (no training_mode input, or a constant false one) and whose mask output
// is unused. Prunes the graph afterwards (value and node ids change). Returns
// the number of nodes removed.
int remove_identity_ops(Graph& graph);

// Removes every Cast whose output type is its input's (exporters cast
// values that already have the target type, around shape arithmetic and
// masks). Prunes when anything was removed. Returns the number removed.
int remove_no_op_casts(Graph& graph);

}  // namespace collage
