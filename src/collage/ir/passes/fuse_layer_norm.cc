#include "collage/ir/passes/fuse_layer_norm.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "collage/ir/passes/rewrite_util.h"

namespace collage {
namespace {

// The first normalized axis of a ReduceMean over the trailing axes of its
// input (keepdims), or nullopt.
std::optional<int> trailing_mean_axis(const Graph& graph, const Node* mean, ValueId input) {
  if (mean == nullptr || mean->inputs.size() != 1 || mean->inputs[0] != input) return std::nullopt;
  if (mean->attributes.get_int("keepdims", 1) != 1 || !mean->attributes.has("axes")) {
    return std::nullopt;
  }
  const int rank = graph.type(input).rank();
  std::vector<std::int64_t> axes = mean->attributes.get_ints("axes");
  for (std::int64_t& axis : axes) {
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return std::nullopt;
  }
  std::sort(axes.begin(), axes.end());
  if (axes.empty() || axes.back() != rank - 1) return std::nullopt;
  for (std::size_t i = 1; i < axes.size(); ++i) {
    if (axes[i] != axes[i - 1] + 1) return std::nullopt;
  }
  return static_cast<int>(axes.front());
}

// d^2 as Pow(d, 2) or Mul(d, d).
bool is_square_of(const Graph& graph, ValueId value, ValueId d) {
  if (const Node* pow = made_by(graph, value, "Pow")) {
    std::optional<double> exponent = scalar_constant(graph, pow->input(1));
    return pow->inputs.size() == 2 && pow->inputs[0] == d && exponent && *exponent == 2.0;
  }
  const Node* mul = made_by(graph, value, "Mul");
  return mul != nullptr && mul->inputs.size() == 2 && mul->inputs[0] == d && mul->inputs[1] == d;
}

// A constant operand of `node` (a Mul or Add reading `data`) that varies only
// along the normalized shape, expanded to exactly that shape.
std::optional<Tensor> affine_parameter(const Graph& graph, const Node& node, ValueId data,
                                       const Shape& normalized) {
  if (node.inputs.size() != 2) return std::nullopt;
  const ValueId other = node.inputs[0] == data ? node.inputs[1] : node.inputs[0];
  const Tensor* constant = float_constant(graph, other);
  if (constant == nullptr || other == data) return std::nullopt;
  const Shape& shape = constant->shape();
  // Right-aligned: the constant's leading dims beyond the normalized rank must be 1.
  const std::size_t rank = std::max(shape.size(), normalized.size());
  std::vector<std::int64_t> strides(normalized.size(), 0);
  std::int64_t stride = 1;
  for (std::size_t i = 0; i < rank; ++i) {
    const std::size_t from_end = i;
    const std::int64_t dim =
        from_end < shape.size() ? shape[shape.size() - 1 - from_end] : std::int64_t{1};
    if (from_end >= normalized.size()) {
      if (dim != 1) return std::nullopt;
      continue;
    }
    const std::int64_t want = normalized[normalized.size() - 1 - from_end];
    if (dim != 1 && dim != want) return std::nullopt;
    strides[normalized.size() - 1 - from_end] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  Tensor expanded = Tensor::allocate(TensorType{DType::kFloat32, normalized});
  const std::int64_t count = expanded.numel();
  for (std::int64_t flat = 0; flat < count; ++flat) {
    std::int64_t rest = flat;
    std::int64_t source = 0;
    for (std::size_t d = normalized.size(); d-- > 0;) {
      source += (rest % normalized[d]) * strides[d];
      rest /= normalized[d];
    }
    expanded.data<float>()[flat] = constant->data<float>()[source];
  }
  return expanded;
}

// A layer normalization spelled out, ending at `div`:
// (x - mean(x)) / sqrt(mean((x - mean(x))^2) + epsilon), the means over
// trailing axes from `axis`.
struct LayerNormMatch {
  ValueId x = kNoValue;
  int axis = 0;
  double epsilon = 0;
};

std::optional<LayerNormMatch> match_layer_norm(const Graph& graph, const Node& div) {
  if (!is_onnx_op(div, "Div") || div.inputs.size() != 2 || div.outputs.size() != 1) {
    return std::nullopt;
  }
  const ValueId d = div.inputs[0];
  const Node* sub = made_by(graph, d, "Sub");
  if (sub == nullptr || sub->inputs.size() != 2) return std::nullopt;
  const ValueId x = sub->inputs[0];
  const TensorType& x_type = graph.type(x);
  if (x_type.dtype != DType::kFloat32 || graph.type(div.outputs[0]) != x_type) return std::nullopt;
  std::optional<int> axis =
      trailing_mean_axis(graph, made_by(graph, sub->inputs[1], "ReduceMean"), x);
  if (!axis) return std::nullopt;
  const Node* sqrt = made_by(graph, div.inputs[1], "Sqrt");
  if (sqrt == nullptr || sqrt->inputs.size() != 1) return std::nullopt;
  const Node* add = made_by(graph, sqrt->inputs[0], "Add");
  if (add == nullptr || add->inputs.size() != 2) return std::nullopt;
  const int variance_side = scalar_constant(graph, add->inputs[1]) ? 0 : 1;
  std::optional<double> epsilon = scalar_constant(graph, add->inputs[1 - variance_side]);
  if (!epsilon || *epsilon < 0) return std::nullopt;
  const Node* variance =
      made_by(graph, add->inputs[static_cast<std::size_t>(variance_side)], "ReduceMean");
  if (variance == nullptr || variance->inputs.size() != 1) return std::nullopt;
  if (trailing_mean_axis(graph, variance, variance->inputs[0]) != axis) return std::nullopt;
  if (!is_square_of(graph, variance->inputs[0], d)) return std::nullopt;
  return LayerNormMatch{x, *axis, *epsilon};
}

}  // namespace

int fuse_layer_norm(Graph& graph) {
  int fused = 0;
  const ValueUsers users(graph);
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const auto div_id = static_cast<NodeId>(n);
    const Node& div = graph.node(div_id);
    const std::optional<LayerNormMatch> match = match_layer_norm(graph, div);
    if (!match) continue;
    const ValueId x = match->x;
    const TensorType& x_type = graph.type(x);
    const std::optional<int> axis = match->axis;
    const std::optional<double> epsilon = match->epsilon;

    // The normalized value, then gamma and beta where a Mul and an Add of
    // such constants follow (and read nothing else).
    const Shape normalized(x_type.shape.begin() + *axis, x_type.shape.end());
    NodeId root = div_id;
    ValueId result = div.outputs[0];
    std::optional<Tensor> gamma;
    std::optional<Tensor> beta;
    auto only_user = [&](ValueId value) -> const Node* {
      if (!users.only_by_one_node(value)) return nullptr;
      return &graph.node(users.of(value).front());
    };
    if (const Node* mul = only_user(result); mul != nullptr && is_onnx_op(*mul, "Mul")) {
      gamma = affine_parameter(graph, *mul, result, normalized);
      if (gamma && graph.type(mul->outputs[0]) == x_type) {
        root = users.of(result).front();
        result = mul->outputs[0];
      } else {
        gamma.reset();
      }
    }
    if (const Node* shift = only_user(result); shift != nullptr && is_onnx_op(*shift, "Add")) {
      beta = affine_parameter(graph, *shift, result, normalized);
      if (beta && graph.type(shift->outputs[0]) == x_type) {
        root = users.of(result).front();
      } else {
        beta.reset();
      }
    }
    if (!gamma) {
      gamma = Tensor::allocate(TensorType{DType::kFloat32, normalized});
      std::fill_n(gamma->data<float>(), gamma->numel(), 1.0f);
    }

    const std::string base = graph.value(graph.node(root).outputs[0]).name;
    std::vector<ValueId> inputs = {
        x, graph.add_constant(unused_value_name(graph, base + "/gamma"), std::move(*gamma))};
    if (beta) {
      inputs.push_back(
          graph.add_constant(unused_value_name(graph, base + "/beta"), std::move(*beta)));
    }
    Attributes attributes;
    attributes.set("axis", static_cast<std::int64_t>(*axis));
    attributes.set("epsilon", static_cast<float>(*epsilon));
    Node& rewritten = graph.node(root);
    rewritten.op_type = "LayerNormalization";
    rewritten.domain.clear();
    rewritten.inputs = std::move(inputs);
    rewritten.attributes = std::move(attributes);
    ++fused;
  }
  if (fused > 0) graph.prune();
  return fused;
}

}  // namespace collage
