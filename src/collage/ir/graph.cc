#include "collage/ir/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <set>

#include "collage/ir/error.h"

namespace collage {

ValueId Graph::new_value(std::string name, TensorType type) {
  assert(!value_by_name_.count(name) && "Graph: duplicate value name");
  auto id = static_cast<ValueId>(values_.size());
  value_by_name_.emplace(name, id);
  values_.push_back(Value{std::move(name), std::move(type), kNoNode, std::nullopt});
  return id;
}

ValueId Graph::add_input(std::string name, TensorType type) {
  ValueId id = new_value(std::move(name), std::move(type));
  inputs_.push_back(id);
  return id;
}

ValueId Graph::add_constant(std::string name, Tensor tensor) {
  ValueId id = new_value(std::move(name), tensor.type());
  values_[static_cast<std::size_t>(id)].constant = std::move(tensor);
  return id;
}

ValueId Graph::add_value(std::string name, TensorType type) {
  return new_value(std::move(name), std::move(type));
}

void Graph::add_output(ValueId value) { outputs_.push_back(value); }

NodeId Graph::add_node(std::string op_type, std::vector<ValueId> inputs,
                       std::vector<ValueId> outputs, Attributes attributes, std::string name) {
  auto id = static_cast<NodeId>(nodes_.size());
  if (name.empty()) name = fmt::format("{}_{}", op_type, id);
  for (ValueId output : outputs) {
    assert(value(output).producer == kNoNode && "Graph::add_node: value already defined");
    value(output).producer = id;
  }
  nodes_.push_back(Node{std::move(name), std::move(op_type), "", std::move(inputs),
                        std::move(outputs), std::move(attributes)});
  return id;
}

std::optional<ValueId> Graph::find_value(std::string_view name) const {
  auto it = value_by_name_.find(std::string(name));
  if (it == value_by_name_.end()) return std::nullopt;
  return it->second;
}

std::optional<NodeId> Graph::find_node(std::string_view name) const {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].name == name) return static_cast<NodeId>(i);
  }
  return std::nullopt;
}

bool Graph::is_output(ValueId id) const {
  return std::find(outputs_.begin(), outputs_.end(), id) != outputs_.end();
}

std::vector<std::vector<NodeId>> Graph::consumers() const {
  std::vector<std::vector<NodeId>> result(values_.size());
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    for (ValueId input : nodes_[n].inputs) {
      if (input == kNoValue) continue;
      auto& users = result[static_cast<std::size_t>(input)];
      if (users.empty() || users.back() != static_cast<NodeId>(n)) {
        users.push_back(static_cast<NodeId>(n));
      }
    }
  }
  return result;
}

void Graph::replace_uses(ValueId from, ValueId to) {
  for (Node& node : nodes_) {
    std::replace(node.inputs.begin(), node.inputs.end(), from, to);
  }
  std::replace(outputs_.begin(), outputs_.end(), from, to);
}

void Graph::erase_nodes(const std::vector<NodeId>& doomed) {
  std::vector<bool> erase(nodes_.size(), false);
  for (NodeId id : doomed) erase[static_cast<std::size_t>(id)] = true;
  std::vector<Node> kept;
  kept.reserve(nodes_.size());
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    if (!erase[n]) kept.push_back(std::move(nodes_[n]));
  }
  nodes_ = std::move(kept);
  for (Value& value : values_) value.producer = kNoNode;
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    for (ValueId output : nodes_[n].outputs)
      values_[static_cast<std::size_t>(output)].producer = static_cast<NodeId>(n);
  }
}

void Graph::sort_topologically() {
  const std::size_t count = nodes_.size();
  std::vector<int> missing(count, 0);
  auto users = consumers();
  for (std::size_t n = 0; n < count; ++n) {
    std::set<ValueId> distinct(nodes_[n].inputs.begin(), nodes_[n].inputs.end());
    for (ValueId input : distinct) {
      if (input == kNoValue) continue;
      const Value& v = value(input);
      if (v.producer != kNoNode) {
        ++missing[n];
        continue;
      }
      bool is_input = std::find(inputs_.begin(), inputs_.end(), input) != inputs_.end();
      if (!v.is_constant() && !is_input) {
        throw Error("reads a value that nothing defines",
                    {.node = nodes_[n].name, .field = "input " + quote_untrusted(v.name)});
      }
    }
  }
  // Kahn's algorithm, always taking the lowest ready index so that an already
  // sorted graph keeps its order.
  std::set<std::size_t> ready;
  for (std::size_t n = 0; n < count; ++n) {
    if (missing[n] == 0) ready.insert(n);
  }
  std::vector<std::size_t> order;
  order.reserve(count);
  while (!ready.empty()) {
    std::size_t n = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(n);
    for (ValueId output : nodes_[n].outputs) {
      for (NodeId user : users[static_cast<std::size_t>(output)]) {
        if (--missing[static_cast<std::size_t>(user)] == 0) ready.insert(user);
      }
    }
  }
  if (order.size() != count) throw Error("the graph has a cycle");
  std::vector<Node> sorted;
  sorted.reserve(count);
  for (std::size_t n : order) sorted.push_back(std::move(nodes_[n]));
  nodes_ = std::move(sorted);
  erase_nodes({});
}

void Graph::prune() {
  // Live nodes: those some graph output depends on.
  std::vector<bool> live_value(values_.size(), false);
  std::vector<bool> live_node(nodes_.size(), false);
  for (ValueId output : outputs_) live_value[static_cast<std::size_t>(output)] = true;
  for (std::size_t n = nodes_.size(); n-- > 0;) {
    const Node& node = nodes_[n];
    bool needed = std::any_of(node.outputs.begin(), node.outputs.end(),
                              [&](ValueId v) { return live_value[static_cast<std::size_t>(v)]; });
    if (!needed) continue;
    live_node[n] = true;
    for (ValueId v : node.inputs) {
      if (v != kNoValue) live_value[static_cast<std::size_t>(v)] = true;
    }
    for (ValueId v : node.outputs) live_value[static_cast<std::size_t>(v)] = true;
  }
  for (ValueId input : inputs_) live_value[static_cast<std::size_t>(input)] = true;

  std::vector<ValueId> remap(values_.size(), kNoValue);
  std::vector<Value> values;
  value_by_name_.clear();
  for (std::size_t v = 0; v < values_.size(); ++v) {
    if (!live_value[v]) continue;
    remap[v] = static_cast<ValueId>(values.size());
    value_by_name_.emplace(values_[v].name, remap[v]);
    values.push_back(std::move(values_[v]));
  }
  auto map_id = [&](ValueId id) {
    return id == kNoValue ? kNoValue : remap[static_cast<std::size_t>(id)];
  };
  std::vector<Node> nodes;
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    if (!live_node[n]) continue;
    Node node = std::move(nodes_[n]);
    for (ValueId& v : node.inputs) v = map_id(v);
    for (ValueId& v : node.outputs) v = map_id(v);
    nodes.push_back(std::move(node));
  }
  for (ValueId& v : inputs_) v = map_id(v);
  for (ValueId& v : outputs_) v = map_id(v);
  values_ = std::move(values);
  nodes_ = std::move(nodes);
  erase_nodes({});
}

Graph extract_subgraph(const Graph& graph, const std::vector<NodeId>& nodes) {
  std::vector<NodeId> order = nodes;
  std::sort(order.begin(), order.end());
  order.erase(std::unique(order.begin(), order.end()), order.end());
  std::vector<bool> inside(graph.num_nodes(), false);
  for (NodeId n : order) inside[static_cast<std::size_t>(n)] = true;

  Graph sub;
  sub.name = graph.name;
  sub.opset = graph.opset;
  sub.source_opset = graph.source_opset;
  sub.other_opsets = graph.other_opsets;
  std::vector<ValueId> remap(graph.num_values(), kNoValue);
  auto import_value = [&](ValueId id) {
    auto& mapped = remap[static_cast<std::size_t>(id)];
    if (mapped != kNoValue) return mapped;
    const Value& v = graph.value(id);
    bool defined_inside = v.producer != kNoNode && inside[static_cast<std::size_t>(v.producer)];
    if (v.is_constant()) {
      mapped = sub.add_constant(v.name, *v.constant);
    } else if (defined_inside) {
      mapped = sub.add_value(v.name, v.type);
    } else {
      mapped = sub.add_input(v.name, v.type);
    }
    return mapped;
  };
  auto users = graph.consumers();
  for (NodeId n : order) {
    const Node& node = graph.node(n);
    std::vector<ValueId> inputs;
    for (ValueId v : node.inputs) inputs.push_back(v == kNoValue ? kNoValue : import_value(v));
    std::vector<ValueId> outputs;
    for (ValueId v : node.outputs) outputs.push_back(import_value(v));
    NodeId copy = sub.add_node(node.op_type, inputs, outputs, node.attributes, node.name);
    sub.node(copy).domain = node.domain;
  }
  for (NodeId n : order) {
    for (ValueId v : graph.node(n).outputs) {
      const auto& readers = users[static_cast<std::size_t>(v)];
      bool read_outside = std::any_of(readers.begin(), readers.end(), [&](NodeId r) {
        return !inside[static_cast<std::size_t>(r)];
      });
      if (read_outside || graph.is_output(v)) sub.add_output(remap[static_cast<std::size_t>(v)]);
      if (graph.is_output(v)) sub.model_edges.insert(graph.value(v).name);
    }
  }
  for (ValueId input : graph.inputs()) {
    const ValueId mapped = remap[static_cast<std::size_t>(input)];
    if (mapped != kNoValue && !sub.value(mapped).is_constant()) {
      sub.model_edges.insert(graph.value(input).name);
    }
  }
  return sub;
}

std::vector<std::string> model_edge_positions(const Graph& graph,
                                              const std::function<bool(ValueId)>& keep) {
  std::vector<std::string> positions;
  auto collect = [&](const std::vector<ValueId>& edges, char side) {
    for (std::size_t i = 0; i < edges.size(); ++i) {
      if (graph.model_edges.contains(graph.value(edges[i]).name) && (!keep || keep(edges[i]))) {
        positions.push_back(fmt::format("{}{}", side, i));
      }
    }
  };
  collect(graph.inputs(), 'i');
  collect(graph.outputs(), 'o');
  return positions;
}

std::map<std::string, int> op_histogram(const Graph& graph) {
  std::map<std::string, int> counts;
  for (const Node& node : graph.nodes()) ++counts[node.op_type];
  return counts;
}

}  // namespace collage
