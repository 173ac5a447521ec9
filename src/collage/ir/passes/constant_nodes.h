// Constant nodes become constant values.
//
// ONNX has two ways to write constant data: initializers and Constant nodes.
// PyTorch's exporter uses the latter for every literal (shape vectors, scalars
// of arithmetic). The rest of the project looks only at Value::constant, so
// this pass turns each Constant node into the constant value it defines;
// folding and pattern matching (`Pattern::constant()`) then see it.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

// Replaces every Constant node whose attribute holds numeric data (value,
// value_float(s), value_int(s)) by a constant value under the same name.
// Constants that are graph outputs keep their node, so that every graph output
// stays an input or the output of a node. Returns the number of nodes replaced.
int constant_nodes_to_constants(Graph& graph);

}  // namespace collage
