#include "collage/backends/onednn/op_support.h"

#include <fmt/format.h>

#include <oneapi/dnnl/dnnl.hpp>

#include "collage/backends/onednn/node_checks.h"
#include "collage/backends/onednn/op_table.h"
#include "collage/ir/error.h"

namespace collage::onednn {

bool int8_products_exact() {
  static const bool exact = [] {
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx512_core_vnni || isa == dnnl::cpu_isa::avx512_core_bf16 ||
           isa == dnnl::cpu_isa::avx512_core_amx || isa == dnnl::cpu_isa::avx2_vnni;
  }();
  return exact;
}

std::optional<std::string> why_unsupported(const Graph& graph, const Node& node) {
  const std::string op = qualified_op_type(node);
  const OpRow* row = find_op_row(op);
  if (row == nullptr) return fmt::format("oneDNN has no primitive for {}", op);
  if ((op == "QLinearConv" || op == "collage.QLinearConvTranspose" || op == "QLinearMatMul" ||
       op == "com.microsoft.QGemm") &&
      !int8_products_exact()) {
    return fmt::format("{}: oneDNN's int8 products saturate on this CPU (no VNNI)", op);
  }
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
