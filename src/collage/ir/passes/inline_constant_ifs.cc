#include "collage/ir/passes/inline_constant_ifs.h"

#include <optional>
#include <string>
#include <vector>

#include "collage/ir/control_flow.h"
#include "collage/ir/passes/rewrite_util.h"

namespace collage {
namespace {

// The first If with a constant condition, and the name of the branch it takes.
std::optional<std::pair<NodeId, std::string>> constant_if(const Graph& graph) {
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(static_cast<NodeId>(n));
    if (node.op_type != "If" || !is_control_flow(node) || node.input(0) == kNoValue) continue;
    const Value& condition = graph.value(node.input(0));
    if (!condition.is_constant() || condition.constant->numel() != 1) continue;
    const DType dtype = condition.constant->dtype();
    if (dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16) continue;
    const std::string name = condition.constant->int_at(0) != 0 ? "then_branch" : "else_branch";
    if (!node.attributes.has(name)) continue;
    const Subgraph& taken = node.attributes.get_graph(name);
    if (!taken || taken->outputs().size() != node.outputs.size() ||
        taken->inputs().size() != static_cast<std::size_t>(taken->captured) ||
        node.inputs.size() != 1 + taken->inputs().size()) {
      continue;
    }
    return std::make_pair(static_cast<NodeId>(n), name);
  }
  return std::nullopt;
}

void inline_branch(Graph& graph, NodeId if_id, const Graph& branch) {
  const Node node = graph.node(if_id);
  std::vector<ValueId> mapped(branch.num_values(), kNoValue);
  for (std::size_t i = 0; i < branch.inputs().size(); ++i) {
    mapped[static_cast<std::size_t>(branch.inputs()[i])] = node.inputs[1 + i];
  }
  // A branch output its nodes define becomes the If's output itself.
  for (std::size_t k = 0; k < node.outputs.size(); ++k) {
    const ValueId inner = branch.outputs()[k];
    auto& slot = mapped[static_cast<std::size_t>(inner)];
    if (branch.value(inner).producer != kNoNode && slot == kNoValue) slot = node.outputs[k];
  }
  for (std::size_t v = 0; v < branch.num_values(); ++v) {
    const Value& value = branch.value(static_cast<ValueId>(v));
    if (value.is_constant() && mapped[v] == kNoValue) {
      mapped[v] = graph.add_constant(unused_value_name(graph, node.name + "/" + value.name),
                                     *value.constant);
    }
  }
  graph.erase_nodes({if_id});
  for (const Node& inner : branch.nodes()) {
    std::vector<ValueId> inputs;
    for (ValueId id : inner.inputs) {
      inputs.push_back(id == kNoValue ? kNoValue : mapped[static_cast<std::size_t>(id)]);
    }
    std::vector<ValueId> outputs;
    for (ValueId id : inner.outputs) {
      auto& slot = mapped[static_cast<std::size_t>(id)];
      if (slot == kNoValue) {
        slot = graph.add_value(unused_value_name(graph, node.name + "/" + branch.value(id).name),
                               branch.type(id));
      }
      outputs.push_back(slot);
    }
    const NodeId added = graph.add_node(inner.op_type, std::move(inputs), std::move(outputs),
                                        inner.attributes, node.name + "/" + inner.name);
    graph.node(added).domain = inner.domain;
  }
  // Outputs that are a captured value, a weight, or one value given twice:
  // handed on by an Identity, which canonicalization removes.
  for (std::size_t k = 0; k < node.outputs.size(); ++k) {
    const ValueId from = mapped[static_cast<std::size_t>(branch.outputs()[k])];
    if (from == node.outputs[k]) continue;
    graph.add_node("Identity", {from}, {node.outputs[k]}, {},
                   node.name + "/output" + std::to_string(k));
  }
}

}  // namespace

int inline_constant_ifs(Graph& graph) {
  int inlined = 0;
  while (std::optional<std::pair<NodeId, std::string>> found = constant_if(graph)) {
    // The branch lives in the If's attribute: held while the If goes.
    const Subgraph branch = graph.node(found->first).attributes.get_graph(found->second);
    inline_branch(graph, found->first, *branch);
    ++inlined;
  }
  if (inlined > 0) graph.sort_topologically();
  return inlined;
}

}  // namespace collage
