#include "collage/ir/passes/constant_nodes.h"

#include <optional>
#include <vector>

namespace collage {
namespace {

// The tensor a Constant node defines, or nullopt for forms we cannot hold
// (strings, sparse tensors).
std::optional<Tensor> constant_value(const Attributes& attributes) {
  if (attributes.has("value")) {
    const AttributeValue& value = attributes.all().at("value");
    if (const Tensor* tensor = std::get_if<Tensor>(&value)) return *tensor;
    return std::nullopt;
  }
  if (attributes.has("value_float")) {
    return Tensor::from_vector<float>({attributes.get_float("value_float")}, {});
  }
  if (attributes.has("value_int")) {
    return Tensor::from_vector<std::int64_t>({attributes.get_int("value_int")}, {});
  }
  if (attributes.has("value_floats")) {
    const auto& values = attributes.get_floats("value_floats");
    return Tensor::from_vector<float>(values, {static_cast<std::int64_t>(values.size())});
  }
  if (attributes.has("value_ints")) {
    const auto& values = attributes.get_ints("value_ints");
    return Tensor::from_vector<std::int64_t>(values, {static_cast<std::int64_t>(values.size())});
  }
  return std::nullopt;
}

}  // namespace

int constant_nodes_to_constants(Graph& graph) {
  std::vector<NodeId> replaced;
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(static_cast<NodeId>(n));
    if (node.op_type != "Constant" || !node.domain.empty() || node.outputs.size() != 1) continue;
    ValueId out = node.outputs[0];
    if (graph.is_output(out)) continue;
    std::optional<Tensor> tensor = constant_value(node.attributes);
    if (!tensor) continue;
    Value& value = graph.value(out);
    value.type = tensor->type();
    value.constant = std::move(*tensor);
    replaced.push_back(static_cast<NodeId>(n));
  }
  if (!replaced.empty()) graph.erase_nodes(replaced);
  return static_cast<int>(replaced.size());
}

}  // namespace collage
