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

#include <functional>

#include "collage/ir/graph.h"

namespace collage {

// What is done to a control-flow body once it is typed from its node's
// inputs: the importer canonicalizes it, so that conditions computed from
// shapes inside it fold and the nested Ifs they choose go
// (ir/passes/inline_constant_ifs.h) before its outputs type its node.
using BodyPreparation = std::function<void(Graph& body)>;

// Refines the types of the graph's values (see partial_type.h) with what ONNX
// shape inference can tell; graph inputs and constants keep theirs. The
// bodies of control-flow nodes (ir/control_flow.h) are typed from their
// node's inputs, then `prepare_body` runs on them (unless empty), and the
// nodes' outputs from the bodies'; a body whose input types did not change
// is kept as it is. Throws Error when inference fails outright, gives a
// value an element type the project does not handle, or finds an If whose
// branches give different element types.
void infer_types(Graph& graph, const BodyPreparation& prepare_body = {});

// The same for a graph of one node, as a runtime-shaped region types each
// node it runs (ir/runtime_shapes.h): the node's schema is asked directly
// where it can be, which takes microseconds where a whole inference takes
// a fraction of a millisecond.
void infer_types_at_run_time(Graph& graph);

}  // namespace collage
