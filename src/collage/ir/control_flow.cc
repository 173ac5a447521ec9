#include "collage/ir/control_flow.h"

#include <algorithm>

#include "collage/ir/passes/partial_type.h"

namespace collage {
namespace {

// How many of the node's last inputs are captured values (0 for other nodes).
int captured_inputs(const Node& node) {
  std::vector<const Graph*> all = bodies(node);
  return all.empty() ? 0 : all.front()->captured;
}

// The node's bodies with their attribute names, the then branch first.
std::vector<std::pair<std::string, const Graph*>> named_bodies(const Node& node) {
  std::vector<std::pair<std::string, const Graph*>> found;
  for (const auto& [name, value] : node.attributes.all()) {
    if (const auto* graph = std::get_if<Subgraph>(&value); graph != nullptr && *graph) {
      found.emplace_back(name, graph->get());
    }
  }
  // Attributes are sorted by name, which puts else_branch first.
  if (node.op_type == "If" && found.size() == 2) std::swap(found[0], found[1]);
  return found;
}

}  // namespace

bool is_control_flow(const Node& node) {
  if (!node.domain.empty()) return false;
  return node.op_type == "If" || node.op_type == "Loop" || node.op_type == "Scan";
}

std::vector<const Graph*> bodies(const Node& node) {
  std::vector<const Graph*> found;
  for (const auto& [name, body] : named_bodies(node)) found.push_back(body);
  return found;
}

std::vector<std::string> body_names(const Node& node) {
  std::vector<std::string> names;
  for (const auto& [name, body] : named_bodies(node)) names.push_back(name);
  return names;
}

std::size_t formal_inputs(const Node& node) {
  return node.inputs.size() - static_cast<std::size_t>(captured_inputs(node));
}

bool is_typed(const Graph& graph) {
  return std::all_of(graph.values().begin(), graph.values().end(),
                     [](const Value& value) { return is_static(value.type); });
}

std::map<std::string, int> unsupported_op_counts(
    const Graph& graph, const std::function<bool(const Graph&, const Node&)>& supported) {
  std::map<std::string, int> counts;
  for (const Node& node : graph.nodes()) {
    if (supported(graph, node)) continue;
    std::map<std::string, int> inside;
    for (const Graph* body : bodies(node)) {
      if (!is_typed(*body)) continue;
      for (const auto& [op, count] : unsupported_op_counts(*body, supported)) inside[op] += count;
    }
    if (inside.empty()) {
      ++counts[node.domain.empty() ? node.op_type : node.domain + "." + node.op_type];
    }
    for (const auto& [op, count] : inside) counts[op] += count;
  }
  return counts;
}

void for_each_body_node(const Graph& graph,
                        const std::function<void(const Graph&, const Node&)>& visit) {
  for (const Node& node : graph.nodes()) {
    visit(graph, node);
    for (const Graph* body : bodies(node)) for_each_body_node(*body, visit);
  }
}

}  // namespace collage
