// Canonicalization: the one pipeline of clean-ups between import and
// partitioning.
//
// Every strategy (the Collage search and every baseline) partitions the same
// canonical graph, so comparisons between them are fair: no strategy gains
// from running an Identity another has to run. The pipeline removes
// pass-through ops (remove_identity.h), turns Constant nodes into constants
// (constant_nodes.h), and folds constant sub-graphs (fold_constants.h) until
// nothing changes: folding a shape computation makes the shape of its
// consumer (a Reshape) knowable, which the caller's type inference then
// fills in, which may let more nodes fold. Then it folds BatchNormalization
// into the convolution before it (fold_batch_norm.h) and prunes dead nodes.
#pragma once

#include <functional>

#include "collage/ir/evaluator.h"
#include "collage/ir/graph.h"
#include "collage/ir/passes/fold_constants.h"

namespace collage {

struct CanonicalizeOptions {
  // Computes folded nodes; without one, only Shape and Size nodes fold.
  const OpEvaluator* evaluator = nullptr;
  FoldOptions fold;
  // Refreshes the graph's value types after folding. Type inference lives
  // with the model format (the ONNX importer passes ONNX shape inference);
  // without it, folding runs a single sweep.
  std::function<void(Graph&)> infer_types;
};

// What canonicalize() did, for logs and tests.
struct CanonicalizeStats {
  int identities_removed = 0;
  int constant_nodes_replaced = 0;
  int nodes_folded = 0;
  // Folding sweeps run, the last of which folded nothing (or was the only one).
  int fold_rounds = 0;
  // BatchNormalizations folded into the convolution before them.
  int batch_norms_folded = 0;
};

// Canonicalizes `graph` in place; value and node ids change. Throws Error
// when folding meets inconsistent constant data.
CanonicalizeStats canonicalize(Graph& graph, const CanonicalizeOptions& options);

}  // namespace collage
