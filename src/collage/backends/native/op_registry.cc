#include "collage/backends/native/op_registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <string>
#include <unordered_map>

#include "collage/ir/error.h"

namespace collage::native {

const OpEntry* find_op(std::string_view op_type) {
  static const std::unordered_map<std::string_view, const OpEntry*> by_type = [] {
    std::unordered_map<std::string_view, const OpEntry*> entries;
    for (std::span<const OpEntry> table :
         {compute_ops(), tensor_ops(), control_flow_ops(), runtime_shape_ops()}) {
      for (const OpEntry& entry : table) {
        const bool inserted = entries.emplace(entry.op_type, &entry).second;
        assert(inserted && "find_op: an op type is implemented twice");
        (void)inserted;
      }
    }
    return entries;
  }();
  auto it = by_type.find(op_type);
  return it == by_type.end() ? nullptr : it->second;
}

std::vector<Tensor> run_node_by_node(const Graph& graph, std::span<const Tensor> inputs,
                                     const NodeRun& run_node) {
  std::vector<Tensor> values(graph.num_values());
  for (std::size_t i = 0; i < graph.inputs().size(); ++i)
    values[static_cast<std::size_t>(graph.inputs()[i])] = inputs[i];
  for (std::size_t v = 0; v < graph.num_values(); ++v) {
    const Value& value = graph.value(static_cast<ValueId>(v));
    if (value.is_constant()) values[v] = *value.constant;
  }
  std::vector<Tensor> node_inputs;
  for (const Node& node : graph.nodes()) {
    node_inputs.clear();
    for (ValueId id : node.inputs)
      node_inputs.push_back(id == kNoValue ? Tensor() : values[static_cast<std::size_t>(id)]);
    std::vector<Tensor> results = run_node(node, node_inputs);
    if (results.size() < node.outputs.size()) {
      throw Error(
          fmt::format("it gave {} outputs where it has {}", results.size(), node.outputs.size()),
          {.node = node.name});
    }
    for (std::size_t i = 0; i < node.outputs.size(); ++i)
      values[static_cast<std::size_t>(node.outputs[i])] = std::move(results[i]);
  }
  std::vector<Tensor> outputs;
  for (ValueId id : graph.outputs()) outputs.push_back(values[static_cast<std::size_t>(id)]);
  return outputs;
}

bool node_supported(const Graph& graph, const Node& node) {
  const OpEntry* entry = find_op(node);
  if (entry == nullptr) return false;
  // A malformed attribute (wrong kind) makes a check throw: that node is
  // simply not one the kernels handle.
  try {
    return entry->check(graph, node);
  } catch (const Error&) {
    return false;
  }
}

bool graph_supported(const Graph& graph) {
  return std::all_of(graph.nodes().begin(), graph.nodes().end(),
                     [&](const Node& node) { return node_supported(graph, node); });
}

const OpEntry* find_op(const Node& node) {
  if (node.domain.empty()) return find_op(node.op_type);
  return find_op(node.domain + "." + node.op_type);
}

}  // namespace collage::native
