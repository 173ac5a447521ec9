#include "collage/ir/passes/canonicalize.h"

#include "collage/ir/passes/constant_nodes.h"
#include "collage/ir/passes/fold_batch_norm.h"
#include "collage/ir/passes/remove_identity.h"

namespace collage {

CanonicalizeStats canonicalize(Graph& graph, const CanonicalizeOptions& options) {
  CanonicalizeStats stats;
  stats.identities_removed = remove_identity_ops(graph);
  stats.constant_nodes_replaced = constant_nodes_to_constants(graph);
  while (true) {
    int folded = fold_constants(graph, options.evaluator, options.fold);
    ++stats.fold_rounds;
    stats.nodes_folded += folded;
    if (folded == 0 || !options.infer_types) break;
    // Each productive sweep erases at least one node, so this terminates.
    graph.prune();
    options.infer_types(graph);
  }
  graph.prune();
  stats.batch_norms_folded = fold_batch_norm(graph);
  return stats;
}

}  // namespace collage
