#include "collage/backends/native/op_registry.h"

#include <algorithm>
#include <cassert>
#include <string>
#include <unordered_map>

#include "collage/ir/error.h"

namespace collage::native {

const OpEntry* find_op(std::string_view op_type) {
  static const std::unordered_map<std::string_view, const OpEntry*> by_type = [] {
    std::unordered_map<std::string_view, const OpEntry*> entries;
    for (std::span<const OpEntry> table : {compute_ops(), tensor_ops(), control_flow_ops(), runtime_shape_ops()}) {
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
