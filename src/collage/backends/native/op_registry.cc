#include "collage/backends/native/op_registry.h"

#include <cassert>
#include <string>
#include <unordered_map>

namespace collage::native {

const OpEntry* find_op(std::string_view op_type) {
  static const std::unordered_map<std::string_view, const OpEntry*> by_type = [] {
    std::unordered_map<std::string_view, const OpEntry*> entries;
    for (std::span<const OpEntry> table : {compute_ops(), tensor_ops(), control_flow_ops()}) {
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

const OpEntry* find_op(const Node& node) {
  if (node.domain.empty()) return find_op(node.op_type);
  return find_op(node.domain + "." + node.op_type);
}

}  // namespace collage::native
