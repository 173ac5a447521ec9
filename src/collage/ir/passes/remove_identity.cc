#include "collage/ir/passes/remove_identity.h"

#include <optional>
#include <vector>

#include "collage/ir/passes/partial_type.h"
#include "collage/ir/passes/rewrite_util.h"

namespace collage {
namespace {

// Dropout is the identity unless opset 12's training_mode input says
// otherwise, and even in training mode when its ratio is a constant 0
// (PyTorch exports F.dropout(p=0.0, training=True) so, in Swin-T's attention).
bool dropout_is_inference(const Graph& graph, const Node& node) {
  std::optional<double> ratio = scalar_constant(graph, node.input(1));
  if (ratio && *ratio == 0.0) return true;
  ValueId mode = node.input(2);
  if (mode == kNoValue) return true;
  const Value& value = graph.value(mode);
  if (!value.is_constant()) return false;
  const Tensor& tensor = *value.constant;
  return tensor.numel() == 1 && tensor.int_at(0) == 0;
}

bool is_used(const Graph& graph, const std::vector<std::vector<NodeId>>& users, ValueId id) {
  return !users[static_cast<std::size_t>(id)].empty() || graph.is_output(id);
}

}  // namespace

int remove_identity_ops(Graph& graph) {
  const auto users = graph.consumers();
  std::vector<NodeId> removed;
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(static_cast<NodeId>(n));
    if (!node.domain.empty() || node.inputs.empty() || node.input(0) == kNoValue ||
        node.outputs.empty()) {
      continue;
    }
    if (node.op_type == "Identity") {
      // Copy the ids: redirect_uses() rewrites node inputs, this node's included.
      ValueId in = node.inputs[0];
      ValueId out = node.outputs[0];
      if (redirect_uses(graph, out, in)) removed.push_back(static_cast<NodeId>(n));
      continue;
    }
    if (node.op_type == "Dropout") {
      if (!dropout_is_inference(graph, node)) continue;
      if (node.outputs.size() > 1 && is_used(graph, users, node.outputs[1])) continue;
      ValueId in = node.inputs[0];
      ValueId out = node.outputs[0];
      if (redirect_uses(graph, out, in)) removed.push_back(static_cast<NodeId>(n));
    }
  }
  if (removed.empty()) return 0;
  graph.erase_nodes(removed);
  graph.prune();
  return static_cast<int>(removed.size());
}

int remove_no_op_casts(Graph& graph) {
  std::vector<NodeId> removed;
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(static_cast<NodeId>(n));
    if (!node.domain.empty() || node.op_type != "Cast" || node.inputs.size() != 1 ||
        node.outputs.size() != 1) {
      continue;
    }
    ValueId in = node.inputs[0];
    ValueId out = node.outputs[0];
    if (!is_static(graph.type(in)) || graph.type(in) != graph.type(out)) continue;
    if (redirect_uses(graph, out, in)) removed.push_back(static_cast<NodeId>(n));
  }
  if (removed.empty()) return 0;
  graph.erase_nodes(removed);
  graph.prune();
  return static_cast<int>(removed.size());
}

}  // namespace collage
