#include "collage/ir/passes/fold_channel_affine.h"

#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "collage/ir/passes/rewrite_util.h"

namespace collage {
namespace {

// A producer whose output channels can absorb a per-channel affine map.
struct Producer {
  NodeId id = kNoNode;
  // The channel axis of the producer's output, and how many channels.
  int channel_axis = 1;
  std::int64_t channels = 0;
  // The weight input, and the axis of its tensor that runs over the channels.
  int weight_input = 1;
  int weight_axis = 0;
  // Whether a shift can go into a bias (MatMul has none).
  bool has_bias = true;
};

std::optional<Producer> foldable_producer(const Graph& graph, ValueId x) {
  const NodeId id = graph.value(x).producer;
  if (id == kNoNode) return std::nullopt;
  const Node& node = graph.node(id);
  if (node.outputs.size() != 1) return std::nullopt;
  const Tensor* weight = float_constant(graph, node.input(1));
  if (weight == nullptr || graph.value(node.input(0)).is_constant()) return std::nullopt;
  const Shape& w = weight->shape();
  Producer p;
  p.id = id;
  if (is_onnx_op(node, "Conv") && w.size() >= 3) {
    p.channels = w[0];
  } else if (is_onnx_op(node, "ConvTranspose") && w.size() >= 3 &&
             node.attributes.get_int("group", 1) == 1) {
    p.channels = w[1];
    p.weight_axis = 1;
  } else if (is_onnx_op(node, "Gemm") && w.size() == 2) {
    const bool trans_b = node.attributes.get_int("transB", 0) != 0;
    p.weight_axis = trans_b ? 0 : 1;
    p.channels = w[static_cast<std::size_t>(p.weight_axis)];
  } else if (is_onnx_op(node, "MatMul") && w.size() == 2 && graph.type(x).rank() >= 2) {
    p.channels = w[1];
    p.weight_axis = 1;
    p.channel_axis = graph.type(x).rank() - 1;
    p.has_bias = false;
  } else {
    return std::nullopt;
  }
  if (graph.type(x).rank() <= p.channel_axis) return std::nullopt;
  if (graph.type(x).shape[static_cast<std::size_t>(p.channel_axis)] != p.channels) {
    return std::nullopt;
  }
  return p;
}

struct Affine {
  enum class Kind { kBatchNorm, kScale, kShift } kind;
  std::vector<double> scale;
  std::vector<double> shift;
};

bool is_inference_batch_norm(const Graph& graph, const Node& node, const ValueUsers& users) {
  if (!is_onnx_op(node, "BatchNormalization") || node.inputs.size() < 5) return false;
  if (node.attributes.get_int("training_mode", 0) != 0) return false;
  // Opset < 14 may declare running mean/var outputs; they must be unused.
  for (std::size_t i = 1; i < node.outputs.size(); ++i) {
    ValueId extra = node.outputs[i];
    if (extra != kNoValue && (!users.of(extra).empty() || graph.is_output(extra))) return false;
  }
  return true;
}

// The data input of `node` when it is a per-channel affine map of it.
ValueId data_input(const Graph& graph, const Node& node, const ValueUsers& users) {
  if (node.outputs.size() != 1) return kNoValue;
  if (is_inference_batch_norm(graph, node, users)) return node.inputs[0];
  if (node.inputs.size() != 2) return kNoValue;
  const bool first_constant = graph.value(node.inputs[0]).is_constant();
  const bool second_constant = graph.value(node.inputs[1]).is_constant();
  if (first_constant == second_constant) return kNoValue;
  if (is_onnx_op(node, "Mul") || is_onnx_op(node, "Add")) {
    return first_constant ? node.inputs[1] : node.inputs[0];
  }
  if ((is_onnx_op(node, "Div") || is_onnx_op(node, "Sub")) && second_constant) {
    return node.inputs[0];
  }
  return kNoValue;
}

std::optional<Affine> affine_of(const Graph& graph, const Node& node, ValueId x, int rank,
                                const Producer& p) {
  const auto size = static_cast<std::size_t>(p.channels);
  Affine affine{Affine::Kind::kScale, std::vector<double>(size, 1.0),
                std::vector<double>(size, 0.0)};
  auto channel_values = [&](ValueId id) {
    return per_channel_values(float_constant(graph, id), rank, p.channel_axis, p.channels);
  };
  if (node.op_type == "BatchNormalization") {
    // Its parameters are [C], indexed by the channel (axis 1), not broadcast.
    if (p.channel_axis != 1) return std::nullopt;
    auto parameter = [&](ValueId id) {
      const Tensor* values = float_constant(graph, id);
      return values != nullptr && values->rank() == 1 ? per_channel_values(values, 1, 0, p.channels)
                                                      : std::nullopt;
    };
    auto scale = parameter(node.inputs[1]);
    auto bias = parameter(node.inputs[2]);
    auto mean = parameter(node.inputs[3]);
    auto var = parameter(node.inputs[4]);
    if (!scale || !bias || !mean || !var) return std::nullopt;
    const double epsilon = node.attributes.get_float("epsilon", 1e-5f);
    affine.kind = Affine::Kind::kBatchNorm;
    for (std::size_t c = 0; c < size; ++c) {
      affine.scale[c] = (*scale)[c] / std::sqrt((*var)[c] + epsilon);
      affine.shift[c] = (*bias)[c] - (*mean)[c] * affine.scale[c];
    }
    return affine;
  }
  const ValueId constant = node.inputs[0] == x ? node.inputs[1] : node.inputs[0];
  auto values = channel_values(constant);
  if (!values) return std::nullopt;
  if (node.op_type == "Mul" || node.op_type == "Div") {
    for (std::size_t c = 0; c < size; ++c) {
      if (node.op_type == "Div" && (*values)[c] == 0.0) return std::nullopt;
      affine.scale[c] = node.op_type == "Mul" ? (*values)[c] : 1.0 / (*values)[c];
    }
    return affine;
  }
  affine.kind = Affine::Kind::kShift;
  for (std::size_t c = 0; c < size; ++c) {
    affine.shift[c] = node.op_type == "Add" ? (*values)[c] : -(*values)[c];
  }
  return affine;
}

// `weight` with the slices along `axis` multiplied by `scale`.
Tensor scaled_along(const Tensor& weight, int axis, const std::vector<double>& scale) {
  std::int64_t outer = 1;
  std::int64_t inner = 1;
  const Shape& shape = weight.shape();
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (static_cast<int>(d) < axis) outer *= shape[d];
    if (static_cast<int>(d) > axis) inner *= shape[d];
  }
  const std::int64_t channels = shape[static_cast<std::size_t>(axis)];
  Tensor out = Tensor::allocate(weight.type());
  const float* w = weight.data<float>();
  float* o = out.data<float>();
  for (std::int64_t a = 0; a < outer; ++a) {
    for (std::int64_t c = 0; c < channels; ++c) {
      const double s = scale[static_cast<std::size_t>(c)];
      const std::int64_t base = (a * channels + c) * inner;
      for (std::int64_t i = 0; i < inner; ++i) o[base + i] = static_cast<float>(w[base + i] * s);
    }
  }
  return out;
}

// The producer's bias as one value per channel (zeros when it has none), and
// the factor the bias is multiplied by (Gemm's beta). nullopt when the bias is
// not a per-channel constant.
std::optional<std::pair<std::vector<double>, double>> current_bias(const Graph& graph,
                                                                   const Node& node,
                                                                   const Producer& p) {
  const ValueId bias = node.input(2);
  const double beta = node.op_type == "Gemm" ? node.attributes.get_float("beta", 1.0f) : 1.0;
  if (bias == kNoValue || beta == 0.0) {
    return std::pair{std::vector<double>(static_cast<std::size_t>(p.channels), 0.0), 1.0};
  }
  // Conv's bias is [C]; Gemm's C broadcasts to [M, N], so [N], [1, N] or a scalar.
  const int rank = node.op_type == "Gemm" ? 2 : 1;
  const int axis = node.op_type == "Gemm" ? 1 : 0;
  auto values = per_channel_values(float_constant(graph, bias), rank, axis, p.channels);
  if (!values) return std::nullopt;
  return std::pair{std::move(*values), beta};
}

// The bias `b` (scaled by `beta` where it is added) with `affine` folded in:
// y = s * (acc + beta * b) + t = s * acc + beta * (s * b + t / beta).
Tensor folded_bias(const std::vector<double>& b, double beta, const Affine& affine) {
  std::vector<double> folded(b.size());
  for (std::size_t c = 0; c < b.size(); ++c) {
    folded[c] = b[c] * affine.scale[c] + affine.shift[c] / beta;
  }
  return channel_tensor(folded);
}

void count_fold(ChannelAffineFolds& folds, Affine::Kind kind) {
  switch (kind) {
    case Affine::Kind::kBatchNorm:
      ++folds.batch_norms;
      break;
    case Affine::Kind::kScale:
      ++folds.scales;
      break;
    case Affine::Kind::kShift:
      ++folds.shifts;
      break;
  }
}

}  // namespace

ChannelAffineFolds fold_channel_affine(Graph& graph) {
  ChannelAffineFolds folds;
  while (true) {
    const ValueUsers users(graph);
    std::vector<bool> producer_changed(graph.num_nodes(), false);
    std::vector<NodeId> folded;
    for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
      const Node& node = graph.node(static_cast<NodeId>(n));
      const ValueId x = data_input(graph, node, users);
      if (x == kNoValue || !users.only_by_one_node(x)) continue;
      const ValueId y = node.outputs[0];
      if (graph.type(x) != graph.type(y) || graph.type(x).dtype != DType::kFloat32) continue;
      std::optional<Producer> p = foldable_producer(graph, x);
      if (!p || producer_changed[static_cast<std::size_t>(p->id)]) continue;
      std::optional<Affine> affine = affine_of(graph, node, x, graph.type(x).rank(), *p);
      if (!affine) continue;
      const Node& target = graph.node(p->id);
      const bool shifts = affine->kind != Affine::Kind::kScale;
      if (!p->has_bias && affine->kind == Affine::Kind::kShift) continue;
      std::optional<std::pair<std::vector<double>, double>> bias;
      if (p->has_bias) {
        bias = current_bias(graph, target, *p);
        if (!bias) continue;
      }

      const std::string base = graph.value(y).name;
      const Tensor& weight = *float_constant(graph, target.inputs[1]);
      ValueId new_weight = graph.add_constant(unused_value_name(graph, base + "/folded_weight"),
                                              scaled_along(weight, p->weight_axis, affine->scale));
      ValueId new_bias = kNoValue;
      // A MatMul has no bias: its columns take the scale, and a normalization
      // after it becomes an Add of the shift (a Gemm's bias once
      // fuse_matmul_add has run).
      ValueId kept_shift = kNoValue;
      if (p->has_bias) {
        new_bias = graph.add_constant(unused_value_name(graph, base + "/folded_bias"),
                                      folded_bias(bias->first, bias->second, *affine));
      } else if (shifts) {
        kept_shift = graph.add_constant(unused_value_name(graph, base + "/shift"),
                                        channel_tensor(affine->shift));
      }
      if (kept_shift == kNoValue && !redirect_uses(graph, y, x)) continue;
      Node& producer = graph.node(p->id);
      producer.inputs[1] = new_weight;
      if (new_bias != kNoValue) {
        if (producer.op_type == "Gemm") {
          producer.attributes.set("beta", static_cast<float>(bias->second));
        }
        producer.inputs.resize(std::max<std::size_t>(producer.inputs.size(), 3), kNoValue);
        producer.inputs[2] = new_bias;
      }
      producer_changed[static_cast<std::size_t>(p->id)] = true;
      if (kept_shift != kNoValue) {
        Node& add = graph.node(static_cast<NodeId>(n));
        add.op_type = "Add";
        add.inputs = {x, kept_shift};
        add.outputs.resize(1);
        add.attributes = {};
      } else {
        folded.push_back(static_cast<NodeId>(n));
      }
      count_fold(folds, affine->kind);
    }
    if (folded.empty()) break;
    graph.erase_nodes(folded);
    graph.prune();
  }
  return folds;
}

}  // namespace collage
