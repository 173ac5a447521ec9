#include "collage/ir/control_flow.h"

namespace collage {

bool is_control_flow(const Node& node) {
  if (!node.domain.empty()) return false;
  return node.op_type == "If" || node.op_type == "Loop" || node.op_type == "Scan";
}

std::vector<const Graph*> bodies(const Node& node) {
  std::vector<const Graph*> found;
  for (const auto& [name, value] : node.attributes.all()) {
    if (const auto* graph = std::get_if<Subgraph>(&value); graph != nullptr && *graph) {
      found.push_back(graph->get());
    }
  }
  // Attributes are sorted by name, which puts else_branch first.
  if (node.op_type == "If" && found.size() == 2) std::swap(found[0], found[1]);
  return found;
}

int captured_inputs(const Node& node) {
  std::vector<const Graph*> all = bodies(node);
  return all.empty() ? 0 : all.front()->captured;
}

std::size_t formal_inputs(const Node& node) {
  return node.inputs.size() - static_cast<std::size_t>(captured_inputs(node));
}

void for_each_body_node(const Graph& graph,
                        const std::function<void(const Graph&, const Node&)>& visit) {
  for (const Node& node : graph.nodes()) {
    visit(graph, node);
    for (const Graph* body : bodies(node)) for_each_body_node(*body, visit);
  }
}

}  // namespace collage
