#include "collage/ir/passes/canonicalize.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "collage/ir/passes/cancel_transposes.h"
#include "collage/ir/passes/collapse_reshapes.h"
#include "collage/ir/passes/constant_nodes.h"
#include "collage/ir/passes/fold_channel_affine.h"
#include "collage/ir/passes/fold_channel_shuffles.h"
#include "collage/ir/passes/fold_pads.h"
#include "collage/ir/passes/fuse_activations.h"
#include "collage/ir/passes/fuse_group_norm.h"
#include "collage/ir/passes/fuse_layer_norm.h"
#include "collage/ir/passes/fuse_matmul_add.h"
#include "collage/ir/passes/inline_constant_ifs.h"
#include "collage/ir/passes/lower_einsum.h"
#include "collage/ir/passes/merge_common_subexpressions.h"
#include "collage/ir/passes/quantized_units.h"
#include "collage/ir/passes/remove_identity.h"
#include "collage/ir/passes/trim_conv_taps.h"

namespace collage {
namespace {

// Rounds of optimization before giving up on a fixed point; each rewrite
// removes nodes or makes one node of several, so real graphs settle in two.
constexpr int kMaxOptimizationRounds = 8;

// The name `collage info` lists lowered Einsums under, at every level.
constexpr const char* kLowerEinsum = "lower Einsum to MatMul";
constexpr const char* kInlineConstantIf = "inline If with a folded condition";
constexpr const char* kQuantizedConvolution =
    "DequantizeLinear + Conv + QuantizeLinear -> QLinearConv";
constexpr const char* kQuantizedConvTranspose =
    "DequantizeLinear + ConvTranspose + QuantizeLinear -> QLinearConvTranspose";
constexpr const char* kQuantizedMatMul =
    "DequantizeLinear + MatMul + QuantizeLinear -> QLinearMatMul";
constexpr const char* kQuantizedGemm = "DequantizeLinear + Gemm + QuantizeLinear -> QGemm";
constexpr const char* kQuantizedAdd = "DequantizeLinear + Add + QuantizeLinear -> QLinearAdd";
constexpr const char* kQuantizedMul = "DequantizeLinear + Mul + QuantizeLinear -> QLinearMul";
constexpr const char* kQuantizedUnary =
    "DequantizeLinear + Sigmoid, LeakyRelu, HardSwish, HardSigmoid, Softmax or average pooling "
    "+ QuantizeLinear -> its QLinear op";
constexpr const char* kQuantizedConcat =
    "DequantizeLinear + Concat + QuantizeLinear -> QLinearConcat";
constexpr const char* kQuantizedMove =
    "MaxPool/reshape/Resize between cancelling DequantizeLinear and QuantizeLinear on quantized "
    "values";

class RewriteLog {
 public:
  explicit RewriteLog(CanonicalizeStats& stats) : stats_(stats) {}

  void add(const char* rewrite, int count) {
    if (count == 0) return;
    changed_ = true;
    for (auto& [name, total] : stats_.rewrites) {
      if (name == rewrite) {
        total += count;
        return;
      }
    }
    stats_.rewrites.emplace_back(rewrite, count);
  }
  // Whether anything was logged since the last call.
  bool take_changed() { return std::exchange(changed_, false); }

 private:
  CanonicalizeStats& stats_;
  bool changed_ = false;
};

void optimize_round(Graph& graph, GraphOptLevel level, RewriteLog& log) {
  CommonSubexpressions merged = merge_common_subexpressions(graph);
  log.add("merge duplicate constants", merged.constants);
  log.add("merge duplicate nodes", merged.nodes);
  log.add("remove Cast to the same type", remove_no_op_casts(graph));
  log.add("cancel Transpose pairs", cancel_transposes(graph));
  log.add("collapse Reshape chains", collapse_reshapes(graph));
  const ChannelShuffleFolds shuffles = fold_channel_shuffles(graph);
  log.add("Reshape + Transpose + Reshape channel shuffle -> Gather", shuffles.shuffles);
  log.add("Slice of a constant Gather -> Gather", shuffles.slices);
  ChannelAffineFolds folds = fold_channel_affine(graph);
  log.add("fold BatchNormalization into weights", folds.batch_norms);
  log.add("fold per-channel Mul/Div into weights", folds.scales);
  log.add("fold per-channel Add/Sub into bias", folds.shifts);
  log.add("fold zero Pad into Conv/AveragePool", fold_pads(graph));
  log.add("trim Conv taps that read only padding", trim_conv_taps(graph));
  log.add("MatMul + Add -> Gemm", fuse_matmul_add(graph));
  if (level != GraphOptLevel::kAll) return;
  log.add("LayerNorm chain -> LayerNormalization", fuse_layer_norm(graph));
  log.add("GroupNorm chain -> GroupNormalization", fuse_group_norm(graph));
  log.add("Gelu chain -> Gelu", fuse_gelu(graph));
  log.add("HardSigmoid chain -> HardSigmoid", fuse_hard_sigmoid(graph));
  log.add("HardSwish chain -> HardSwish", fuse_hard_swish(graph));
  log.add("x * sigmoid(x) -> Swish", fuse_swish(graph));
}

}  // namespace

std::string_view to_string(GraphOptLevel level) {
  switch (level) {
    case GraphOptLevel::kNone:
      return "none";
    case GraphOptLevel::kBasic:
      return "basic";
    case GraphOptLevel::kAll:
      return "all";
  }
  return "all";
}

std::optional<GraphOptLevel> parse_graph_opt_level(std::string_view text) {
  for (GraphOptLevel level : {GraphOptLevel::kNone, GraphOptLevel::kBasic, GraphOptLevel::kAll}) {
    if (text == to_string(level)) return level;
  }
  return std::nullopt;
}

int CanonicalizeStats::count(std::string_view rewrite) const {
  for (const auto& [name, total] : rewrites) {
    if (name == rewrite) return total;
  }
  return 0;
}

CanonicalizeStats canonicalize(Graph& graph, const CanonicalizeOptions& options) {
  CanonicalizeStats stats;
  // Constants first: a Dropout's training_mode may come from a Constant node.
  stats.constant_nodes_replaced = constant_nodes_to_constants(graph);
  stats.identities_removed = remove_identity_ops(graph);
  // Quantized units before folding, which would turn their weights' DequantizeLinear
  // into float constants.
  std::vector<std::pair<const char*, int>> quantized_units;
  int casts_before_units = 0;
  int folded_before_units = 0;
  if (options.graph_opt != GraphOptLevel::kNone) {
    // PyTorch's quantized exports spell a unit's parts indirectly: a Cast to
    // the type the value has between QuantizeLinear and DequantizeLinear, a
    // bias's zero point made by ConstantOfShape and Cast. Those go first,
    // with every DequantizeLinear left for the units to read.
    const bool quantized =
        std::any_of(graph.nodes().begin(), graph.nodes().end(),
                    [](const Node& node) { return node.op_type == "DequantizeLinear"; });
    if (quantized) {
      casts_before_units = remove_no_op_casts(graph);
      FoldOptions keep_dequantize = options.fold;
      keep_dequantize.keep_dequantize = true;
      folded_before_units = fold_constants(graph, options.evaluator, keep_dequantize);
      stats.nodes_folded += folded_before_units;
    }
    quantized_units = {{kQuantizedConvolution, fuse_quantized_convolutions(graph)},
                       {kQuantizedConvTranspose, fuse_quantized_conv_transposes(graph)},
                       {kQuantizedMatMul, fuse_quantized_matmuls(graph)},
                       {kQuantizedGemm, fuse_quantized_gemms(graph)},
                       {kQuantizedAdd, fuse_quantized_adds(graph)},
                       {kQuantizedMul, fuse_quantized_muls(graph)},
                       {kQuantizedUnary, fuse_quantized_unaries(graph)},
                       {kQuantizedConcat, fuse_quantized_concats(graph)},
                       {kQuantizedMove, move_quantized_values(graph)}};
  }
  int einsums_lowered = 0;
  int ifs_inlined = 0;
  // Types read from what were Constant nodes (OneHot's depth) are inferred
  // again once those are constants, even when nothing folds.
  bool constants_new = stats.constant_nodes_replaced > 0 || folded_before_units > 0;
  while (true) {
    int folded = fold_constants(graph, options.evaluator, options.fold);
    ++stats.fold_rounds;
    stats.nodes_folded += folded;
    // An Einsum lowers once its operands' shapes are known; the nodes it
    // becomes let inference type what reads its output.
    const int lowered = lower_einsums(graph);
    einsums_lowered += lowered;
    // An If whose condition folded is its branch; what follows is typed
    // from the branch's values.
    const int inlined = inline_constant_ifs(graph);
    ifs_inlined += inlined;
    if (inlined > 0) {
      // A branch brings its Constant nodes along; they become constants
      // here like the graph's own, so what they feed folds in the next sweep.
      stats.constant_nodes_replaced += constant_nodes_to_constants(graph);
      stats.identities_removed += remove_identity_ops(graph);
    }
    if ((folded + lowered + inlined == 0 && !constants_new) || !options.infer_types) break;
    constants_new = false;
    // Each productive sweep erases at least one node, so this terminates.
    graph.prune();
    options.infer_types(graph);
  }
  const std::size_t before_prune = graph.num_nodes();
  graph.prune();
  stats.dead_nodes_removed = static_cast<int>(before_prune - graph.num_nodes());
  stats.ops_before_optimization = op_histogram(graph);
  if (einsums_lowered > 0) stats.rewrites.emplace_back(kLowerEinsum, einsums_lowered);
  if (ifs_inlined > 0) stats.rewrites.emplace_back(kInlineConstantIf, ifs_inlined);
  for (const auto& [rewrite, count] : quantized_units) {
    if (count > 0) stats.rewrites.emplace_back(rewrite, count);
  }
  if (options.graph_opt == GraphOptLevel::kNone) return stats;

  RewriteLog log(stats);
  log.add("remove Cast to the same type", casts_before_units);
  while (stats.optimization_rounds < kMaxOptimizationRounds) {
    ++stats.optimization_rounds;
    optimize_round(graph, options.graph_opt, log);
    if (!log.take_changed()) break;
  }
  return stats;
}

}  // namespace collage
