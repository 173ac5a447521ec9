#include "collage/backends/onednn/op_support.h"

#include <fmt/format.h>

#include "collage/backends/onednn/node_checks.h"
#include "collage/backends/onednn/op_table.h"
#include "collage/ir/error.h"

namespace collage::onednn {

std::optional<std::string> why_unsupported(const Graph& graph, const Node& node) {
  const OpRow* row = find_op_row(qualified_op_type(node));
  if (row == nullptr) return fmt::format("oneDNN has no primitive for {}", qualified_op_type(node));
  try {
    return row->check(graph, node);
  } catch (const Error& e) {
    // An attribute of an unexpected kind: not a node this backend runs.
    return fmt::format("{}: {}", node.op_type, e.what());
  }
}

std::vector<std::string> supported_op_types() {
  std::vector<std::string> ops;
  for (const OpRow& row : op_table())
    ops.insert(ops.end(), row.op_types.begin(), row.op_types.end());
  return ops;
}

}  // namespace collage::onednn
