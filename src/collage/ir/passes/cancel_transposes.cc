#include "collage/ir/passes/cancel_transposes.h"

#include <vector>

#include "collage/ir/passes/rewrite_util.h"
#include "collage/ir/transpose_perm.h"

namespace collage {
namespace {

bool is_transpose(const Node& node) {
  return is_onnx_op(node, "Transpose") && node.inputs.size() == 1 && node.outputs.size() == 1;
}

}  // namespace

int cancel_transposes(Graph& graph) {
  const std::size_t nodes_before = graph.num_nodes();
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& outer = graph.node(static_cast<NodeId>(n));
    if (!is_transpose(outer)) continue;
    const Node* inner = producer_of(graph, outer.inputs[0]);
    if (inner == nullptr || !is_transpose(*inner)) continue;
    const std::vector<std::int64_t> first = transpose_permutation(graph, *inner);
    const std::vector<std::int64_t> second = transpose_permutation(graph, outer);
    if (first.empty() || second.empty() || first.size() != second.size()) continue;
    // out[i] = mid[second[i]] = in[first[second[i]]]
    std::vector<std::int64_t> composed(first.size());
    bool identity = true;
    for (std::size_t i = 0; i < composed.size(); ++i) {
      composed[i] = first[static_cast<std::size_t>(second[i])];
      identity = identity && composed[i] == static_cast<std::int64_t>(i);
    }
    const ValueId source = inner->inputs[0];
    if (identity) {
      redirect_uses(graph, outer.outputs[0], source);
      continue;
    }
    Node& rewritten = graph.node(static_cast<NodeId>(n));
    rewritten.inputs[0] = source;
    rewritten.attributes.set("perm", composed);
  }
  graph.prune();
  return static_cast<int>(nodes_before - graph.num_nodes());
}

}  // namespace collage
