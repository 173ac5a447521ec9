#include "collage/backends/openblas/openblas_patterns.h"

#include <string>

#include "collage/backends/openblas/activation.h"
#include "collage/backends/openblas/fused_kernel.h"
#include "collage/backends/openblas/head_op.h"

namespace collage::openblas {
namespace {

bool head_supported(const Graph& graph, const Node& node) {
  return analyze_head_op(graph, node).ok();
}

Pattern head(const std::string& op_type) { return Pattern::op(op_type).where(head_supported); }

Pattern add(const Pattern& input) {
  return Pattern::commutative_op("Add", input, Pattern::wildcard()).where(can_follow_head);
}

Pattern activation(const Pattern& input) {
  const std::span<const std::string_view> ops = activation_ops();
  Pattern result = Pattern::op(std::string(ops[0]), {input}).where(can_follow_head);
  for (std::size_t i = 1; i < ops.size(); ++i) {
    result = result | Pattern::op(std::string(ops[i]), {input}).where(can_follow_head);
  }
  return result;
}

}  // namespace

std::vector<NamedPattern> openblas_patterns() {
  std::vector<NamedPattern> patterns;
  const std::pair<std::string, Pattern> heads[] = {
      {"conv", head("Conv")},
      {"gemm", head("Gemm") | head("MatMul")},
  };
  for (const auto& [name, op] : heads) {
    patterns.push_back({name + "_activation", activation(op)});
    patterns.push_back({name + "_add", add(op)});
    patterns.push_back({name + "_add_activation", activation(add(op))});
    patterns.push_back({name + "_add_add", add(add(op))});
    patterns.push_back({name + "_add_add_activation", activation(add(add(op)))});
  }
  return patterns;
}

}  // namespace collage::openblas
