#include "collage/ir/passes/fold_batch_norm.h"

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace collage {
namespace {

const Tensor* float_constant(const Graph& graph, ValueId id, std::int64_t numel) {
  if (id == kNoValue) return nullptr;
  const Value& value = graph.value(id);
  if (!value.is_constant() || value.constant->dtype() != DType::kFloat32) return nullptr;
  if (numel >= 0 && value.constant->numel() != numel) return nullptr;
  return &*value.constant;
}

// Where a convolution's output channels sit in its weight tensor: Conv's
// weight is [C_out, C_in/group, k...]; ConvTranspose's (group 1) is
// [C_in, C_out, k...].
struct ChannelLayout {
  std::int64_t outer = 1;     // product of the dims before the channel dim
  std::int64_t channels = 0;  // C_out
  std::int64_t inner = 1;     // product of the dims after it
};

std::optional<ChannelLayout> channel_layout(const Node& conv, const Shape& weight) {
  if (weight.size() < 3) return std::nullopt;
  const std::size_t axis = conv.op_type == "Conv" ? 0 : 1;
  ChannelLayout layout;
  layout.channels = weight[axis];
  for (std::size_t d = 0; d < weight.size(); ++d) {
    if (d < axis) layout.outer *= weight[d];
    if (d > axis) layout.inner *= weight[d];
  }
  return layout;
}

bool folds_into(const Node& conv) {
  if (!conv.domain.empty() || conv.outputs.size() != 1) return false;
  if (conv.op_type == "Conv") return true;
  return conv.op_type == "ConvTranspose" && conv.attributes.get_int("group", 1) == 1;
}

bool is_inference_batch_norm(const Graph& graph, const Node& node,
                             const std::vector<std::vector<NodeId>>& users) {
  if (!node.domain.empty() || node.op_type != "BatchNormalization" || node.inputs.size() < 5) {
    return false;
  }
  if (node.attributes.get_int("training_mode", 0) != 0) return false;
  // Opset < 14 may declare running mean/var outputs; they must be unused.
  for (std::size_t i = 1; i < node.outputs.size(); ++i) {
    ValueId extra = node.outputs[i];
    if (extra != kNoValue &&
        (!users[static_cast<std::size_t>(extra)].empty() || graph.is_output(extra))) {
      return false;
    }
  }
  return true;
}

std::string unused_name(const Graph& graph, const std::string& base) {
  std::string name = base;
  for (int i = 1; graph.find_value(name); ++i) name = base + "_" + std::to_string(i);
  return name;
}

}  // namespace

int fold_batch_norm(Graph& graph) {
  const std::vector<std::vector<NodeId>> users = graph.consumers();
  std::vector<NodeId> producer(graph.num_values(), -1);
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    for (ValueId out : graph.node(static_cast<NodeId>(n)).outputs) {
      if (out != kNoValue) producer[static_cast<std::size_t>(out)] = static_cast<NodeId>(n);
    }
  }

  std::vector<NodeId> folded;
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& bn = graph.node(static_cast<NodeId>(n));
    if (!is_inference_batch_norm(graph, bn, users)) continue;
    const ValueId x = bn.inputs[0];
    const NodeId conv_id = producer[static_cast<std::size_t>(x)];
    if (conv_id < 0) continue;
    if (users[static_cast<std::size_t>(x)].size() != 1 || graph.is_output(x)) continue;
    const Node& conv = graph.node(conv_id);
    if (!folds_into(conv)) continue;
    const Tensor* weight = float_constant(graph, conv.input(1), -1);
    if (weight == nullptr) continue;
    std::optional<ChannelLayout> layout = channel_layout(conv, weight->shape());
    if (!layout) continue;
    const std::int64_t channels = layout->channels;
    const Tensor* bias = float_constant(graph, conv.input(2), channels);
    if (conv.input(2) != kNoValue && bias == nullptr) continue;
    const Tensor* scale = float_constant(graph, bn.inputs[1], channels);
    const Tensor* shift = float_constant(graph, bn.inputs[2], channels);
    const Tensor* mean = float_constant(graph, bn.inputs[3], channels);
    const Tensor* var = float_constant(graph, bn.inputs[4], channels);
    if (scale == nullptr || shift == nullptr || mean == nullptr || var == nullptr) continue;

    const double epsilon = bn.attributes.get_float("epsilon", 1e-5f);
    std::vector<double> factor(static_cast<std::size_t>(channels));
    Tensor new_bias = Tensor::allocate(TensorType{DType::kFloat32, {channels}});
    for (std::int64_t c = 0; c < channels; ++c) {
      const double s =
          scale->data<float>()[c] / std::sqrt(static_cast<double>(var->data<float>()[c]) + epsilon);
      factor[static_cast<std::size_t>(c)] = s;
      const double b = bias != nullptr ? bias->data<float>()[c] : 0.0;
      new_bias.data<float>()[c] =
          static_cast<float>((b - mean->data<float>()[c]) * s + shift->data<float>()[c]);
    }
    Tensor new_weight = Tensor::allocate(weight->type());
    const float* w = weight->data<float>();
    float* out = new_weight.data<float>();
    for (std::int64_t o = 0; o < layout->outer; ++o) {
      for (std::int64_t c = 0; c < channels; ++c) {
        const std::int64_t base = (o * channels + c) * layout->inner;
        for (std::int64_t i = 0; i < layout->inner; ++i) {
          out[base + i] = static_cast<float>(w[base + i] * factor[static_cast<std::size_t>(c)]);
        }
      }
    }

    const ValueId y = bn.outputs[0];
    const std::string base_name = graph.value(y).name;
    ValueId weight_id =
        graph.add_constant(unused_name(graph, base_name + "/folded_weight"), std::move(new_weight));
    ValueId bias_id =
        graph.add_constant(unused_name(graph, base_name + "/folded_bias"), std::move(new_bias));
    Node& target = graph.node(conv_id);
    target.inputs.resize(std::max<std::size_t>(target.inputs.size(), 3), kNoValue);
    target.inputs[1] = weight_id;
    target.inputs[2] = bias_id;
    // The convolution now writes what the normalization wrote, by its name.
    std::swap(graph.value(x).name, graph.value(y).name);
    graph.replace_uses(y, x);
    folded.push_back(static_cast<NodeId>(n));
  }
  if (folded.empty()) return 0;
  graph.erase_nodes(folded);
  graph.prune();
  return static_cast<int>(folded.size());
}

}  // namespace collage
