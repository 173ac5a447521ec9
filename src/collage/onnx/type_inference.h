// Value types from ONNX shape inference.
//
// An ONNX model declares the types of its inputs and weights; the types of
// everything else follow from the operators' semantics, which ONNX's own
// schemas encode. Rather than re-implement them, the importer asks ONNX:
// the graph is exported without its weights' data (types only), ONNX's shape
// inference runs with data propagation (so shape arithmetic on small
// constants is followed), and every type it learns is written back. It runs
// again after each round of constant folding, which makes more shapes known.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

// Refines the types of the graph's values (see partial_type.h) with what ONNX
// shape inference can tell; graph inputs and constants keep theirs. Throws
// Error when inference fails outright or gives a value an element type the
// project does not handle.
void infer_types(Graph& graph);

}  // namespace collage
