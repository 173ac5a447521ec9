// Canonicalization: the one pipeline of clean-ups and graph optimizations
// between import and partitioning.
//
// Every strategy (the Collage search and every baseline) partitions the same
// canonical graph, so comparisons between them are fair: no strategy gains
// from running an Identity another has to run. The pipeline first does what
// import needs at every level: it removes pass-through ops
// (remove_identity.h), turns Constant nodes into constants
// (constant_nodes.h), and folds constant sub-graphs (fold_constants.h) and
// lowers Einsums (lower_einsum.h) until nothing changes: folding a shape
// computation makes the shape of its consumer (a Reshape) knowable, which
// the caller's type inference then fills in, which may let more nodes fold
// or an Einsum lower. Dead nodes go.
//
// Then the graph optimizations of the chosen level run, in rounds until a
// round changes nothing (one rewrite enables another: a BatchNormalization
// folds into a Gemm that a MatMul and an Add became). The levels follow
// ONNX Runtime's:
//   none   nothing more;
//   basic  rewrites that only remove work: common subexpressions, Casts to
//          the same type, cancelling Transposes, Reshape chains, per-channel
//          scales and shifts folded into the weights before them, MatMul
//          with a bias Add to Gemm;
//   all    also fusions of op chains into one op: LayerNormalization, Gelu,
//          Swish, HardSigmoid, HardSwish (fuse_layer_norm.h,
//          fuse_activations.h).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/ir/evaluator.h"
#include "collage/ir/graph.h"
#include "collage/ir/passes/fold_constants.h"

namespace collage {

enum class GraphOptLevel { kNone, kBasic, kAll };

// "none", "basic", "all".
std::string_view to_string(GraphOptLevel level);
// The level named `text`, or nullopt.
std::optional<GraphOptLevel> parse_graph_opt_level(std::string_view text);

struct CanonicalizeOptions {
  // Computes folded nodes; without one, only Shape and Size nodes fold.
  const OpEvaluator* evaluator = nullptr;
  FoldOptions fold;
  // Refreshes the graph's value types after folding. Type inference lives
  // with the model format (the ONNX importer passes ONNX shape inference);
  // without it, folding runs a single sweep.
  std::function<void(Graph&)> infer_types;
  GraphOptLevel graph_opt = GraphOptLevel::kAll;
};

// What canonicalize() did, for `collage info`, logs and tests.
struct CanonicalizeStats {
  int identities_removed = 0;
  int constant_nodes_replaced = 0;
  int nodes_folded = 0;
  // Folding sweeps run, the last of which folded nothing (or was the only one).
  int fold_rounds = 0;
  // Nodes no graph output depends on, dropped after folding.
  int dead_nodes_removed = 0;
  // Op counts after folding, before the graph optimizations.
  std::map<std::string, int> ops_before_optimization;
  // Each graph rewrite that applied, with how many times, in pipeline order
  // (Einsums lowered first, at every level).
  std::vector<std::pair<std::string, int>> rewrites;
  // Optimization rounds run, the last of which changed nothing.
  int optimization_rounds = 0;

  // The count recorded for `rewrite` (0 when it never applied).
  int count(std::string_view rewrite) const;
};

// Canonicalizes `graph` in place; value and node ids change. Throws Error
// when folding meets inconsistent constant data.
CanonicalizeStats canonicalize(Graph& graph, const CanonicalizeOptions& options);

}  // namespace collage
