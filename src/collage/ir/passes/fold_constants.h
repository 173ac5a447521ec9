// Constant folding: nodes whose result is known at import time become
// constant values.
//
// Exported models compute much of their shape arithmetic at run time:
// PyTorch writes `x.view(x.size(0), -1)` as Shape -> Gather -> Unsqueeze ->
// Concat -> Reshape. Left alone, those chains would be partitioned, measured
// and run like real work, and the Reshape's output shape would stay unknown.
// Folding evaluates every node whose inputs are all constant (through an
// OpEvaluator, since kernels live in a higher layer) and, without any
// kernel, every Shape and Size node whose input type is static.
#pragma once

#include <cstdint>

#include "collage/ir/evaluator.h"
#include "collage/ir/graph.h"

namespace collage {

struct FoldOptions {
  // Folding a node whose outputs have more elements than this and more than
  // its constant inputs together would trade a cheap op for a large weight
  // (ConstantOfShape or Expand of a big tensor); such nodes are left alone.
  std::int64_t max_elements = std::int64_t{1} << 20;
  // Leave DequantizeLinear nodes alone: before the quantized units are
  // recognised, an 8-bit constant behind a DequantizeLinear is what marks
  // the weights of a unit, and folding would make it a float constant.
  bool keep_dequantize = false;
};

// Folds, in one sweep in node order (so whole chains fold at once), every
// node of the default domain whose types are static and whose inputs are all
// constant and that `evaluator` can evaluate (with a null evaluator only
// Shape and Size fold). Random ops and nodes that define a graph output are
// never folded. The folded outputs become constants under their names and
// the nodes are erased; nothing is pruned. Returns the number of nodes folded.
// Throws Error (naming the node) when the evaluator rejects its inputs or
// returns a type other than the graph's.
int fold_constants(Graph& graph, const OpEvaluator* evaluator, const FoldOptions& options = {});

}  // namespace collage
