#include "collage/ir/passes/fuse_group_norm.h"

#include <optional>
#include <string>
#include <vector>

#include "collage/ir/passes/rewrite_util.h"

namespace collage {
namespace {

// The operand of `node` (a Mul or Add reading `data`, of `rank` axes and
// `channels` on axis 1) when it is a float32 constant that varies at most
// along the channels, as one value per channel; nullopt otherwise.
std::optional<std::vector<double>> per_channel_operand(const Graph& graph, const Node& node,
                                                       ValueId data, std::int64_t channels,
                                                       int rank) {
  if (node.inputs.size() != 2 || node.outputs.size() != 1) return std::nullopt;
  const ValueId other = node.inputs[0] == data ? node.inputs[1] : node.inputs[0];
  if (other == data) return std::nullopt;
  return per_channel_values(float_constant(graph, other), rank, 1, channels);
}

}  // namespace

int fuse_group_norm(Graph& graph) {
  int fused = 0;
  const ValueUsers users(graph);
  auto only_user = [&](ValueId value) -> const Node* {
    if (!users.only_by_one_node(value)) return nullptr;
    return &graph.node(users.of(value).front());
  };
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& norm = graph.node(static_cast<NodeId>(n));
    if (!is_onnx_op(norm, "InstanceNormalization") || norm.inputs.size() != 3 ||
        norm.outputs.size() != 1) {
      continue;
    }
    // x [N, C, ...] seen as [N, G, C / G * ...].
    const Node* grouping = made_by(graph, norm.inputs[0], "Reshape");
    if (grouping == nullptr || !users.only_by_one_node(norm.inputs[0])) continue;
    const ValueId x = grouping->inputs[0];
    const TensorType x_type = graph.type(x);
    const TensorType& grouped = graph.type(norm.inputs[0]);
    if (x_type.dtype != DType::kFloat32 || x_type.at_run_time || x_type.rank() < 3) continue;
    if (grouped.at_run_time || grouped.rank() != 3 || grouped.shape[0] != x_type.shape[0]) continue;
    const std::int64_t groups = grouped.shape[1];
    const std::int64_t channels = x_type.shape[1];
    if (groups < 1 || channels % groups != 0) continue;
    const Tensor* group_scale = float_constant(graph, norm.inputs[1]);
    const Tensor* group_bias = float_constant(graph, norm.inputs[2]);
    if (group_scale == nullptr || group_bias == nullptr || group_scale->numel() != groups ||
        group_bias->numel() != groups) {
      continue;
    }
    // ... and back to x's shape.
    const Node* ungrouping = only_user(norm.outputs[0]);
    if (ungrouping == nullptr || !is_onnx_op(*ungrouping, "Reshape") ||
        ungrouping->inputs[0] != norm.outputs[0] || ungrouping->outputs.size() != 1 ||
        graph.type(ungrouping->outputs[0]) != x_type) {
      continue;
    }
    NodeId root = users.of(norm.outputs[0]).front();
    ValueId result = ungrouping->outputs[0];

    // Each channel takes its group's scale and bias, then those of a Mul
    // and an Add by per-channel constants that follow.
    std::vector<double> scale(static_cast<std::size_t>(channels));
    std::vector<double> bias(static_cast<std::size_t>(channels));
    const std::int64_t per_group = channels / groups;
    for (std::int64_t c = 0; c < channels; ++c) {
      scale[static_cast<std::size_t>(c)] = group_scale->data<float>()[c / per_group];
      bias[static_cast<std::size_t>(c)] = group_bias->data<float>()[c / per_group];
    }
    if (const Node* mul = only_user(result); mul != nullptr && is_onnx_op(*mul, "Mul")) {
      const std::optional<std::vector<double>> gamma =
          per_channel_operand(graph, *mul, result, channels, x_type.rank());
      if (gamma && graph.type(mul->outputs[0]) == x_type) {
        for (std::size_t c = 0; c < scale.size(); ++c) {
          scale[c] *= (*gamma)[c];
          bias[c] *= (*gamma)[c];
        }
        root = users.of(result).front();
        result = mul->outputs[0];
      }
    }
    if (const Node* add = only_user(result); add != nullptr && is_onnx_op(*add, "Add")) {
      const std::optional<std::vector<double>> beta =
          per_channel_operand(graph, *add, result, channels, x_type.rank());
      if (beta && graph.type(add->outputs[0]) == x_type) {
        for (std::size_t c = 0; c < bias.size(); ++c) bias[c] += (*beta)[c];
        root = users.of(result).front();
      }
    }

    Attributes attributes;
    attributes.set("num_groups", groups);
    attributes.set("epsilon", norm.attributes.get_float("epsilon", 1e-5f));
    const std::string base = graph.value(graph.node(root).outputs[0]).name;
    const ValueId scale_value =
        graph.add_constant(unused_value_name(graph, base + "/scale"), channel_tensor(scale));
    const ValueId bias_value =
        graph.add_constant(unused_value_name(graph, base + "/bias"), channel_tensor(bias));
    Node& rewritten = graph.node(root);
    rewritten.op_type = "GroupNormalization";
    rewritten.domain.clear();
    rewritten.inputs = {x, scale_value, bias_value};
    rewritten.attributes = std::move(attributes);
    ++fused;
  }
  if (fused > 0) graph.prune();
  return fused;
}

}  // namespace collage
