#include "collage/ir/passes/rewrite_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>
#include <variant>

namespace collage {

bool is_onnx_op(const Node& node, const char* op_type) {
  return (node.domain.empty() || node.domain == "ai.onnx") && node.op_type == op_type;
}

const Node* producer_of(const Graph& graph, ValueId value) {
  if (value == kNoValue) return nullptr;
  NodeId producer = graph.value(value).producer;
  return producer == kNoNode ? nullptr : &graph.node(producer);
}

const Node* made_by(const Graph& graph, ValueId value, const char* op_type) {
  const Node* node = producer_of(graph, value);
  return node != nullptr && is_onnx_op(*node, op_type) ? node : nullptr;
}

std::optional<double> scalar_constant(const Graph& graph, ValueId value) {
  if (value == kNoValue) return std::nullopt;
  const Value& v = graph.value(value);
  if (!v.is_constant() || v.constant->numel() != 1) return std::nullopt;
  switch (v.constant->dtype()) {
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kInt32:
    case DType::kInt64:
      return v.constant->number_at(0);
    default:
      return std::nullopt;
  }
}

bool is_scalar_constant(const Graph& graph, ValueId value, double expected, double tolerance) {
  std::optional<double> number = scalar_constant(graph, value);
  return number && std::abs(*number - expected) <= tolerance * std::max(1.0, std::abs(expected));
}

const Tensor* float_constant(const Graph& graph, ValueId value) {
  if (value == kNoValue) return nullptr;
  const Value& v = graph.value(value);
  if (!v.is_constant() || v.constant->dtype() != DType::kFloat32) return nullptr;
  return &*v.constant;
}

std::optional<std::vector<std::int64_t>> int_constant(const Graph& graph, ValueId value) {
  if (value == kNoValue) return std::nullopt;
  const Value& v = graph.value(value);
  if (!v.is_constant() || v.constant->rank() != 1) return std::nullopt;
  const DType dtype = v.constant->dtype();
  if (dtype != DType::kInt64 && dtype != DType::kInt32) return std::nullopt;
  std::vector<std::int64_t> values;
  for (std::int64_t i = 0; i < v.constant->numel(); ++i) values.push_back(v.constant->int_at(i));
  return values;
}

std::optional<std::vector<double>> per_channel_values(const Tensor* c, int rank, int axis,
                                                      std::int64_t channels) {
  if (c == nullptr) return std::nullopt;
  const Shape& shape = c->shape();
  if (static_cast<int>(shape.size()) > rank) return std::nullopt;
  bool varies = false;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const int out_axis = rank - static_cast<int>(shape.size()) + static_cast<int>(d);
    if (shape[d] == 1) continue;
    if (out_axis != axis || shape[d] != channels) return std::nullopt;
    varies = true;
  }
  std::vector<double> values(static_cast<std::size_t>(channels));
  for (std::int64_t i = 0; i < channels; ++i) {
    values[static_cast<std::size_t>(i)] = c->data<float>()[varies ? i : 0];
  }
  return values;
}

Tensor channel_tensor(const std::vector<double>& values) {
  Tensor tensor =
      Tensor::allocate(TensorType{DType::kFloat32, {static_cast<std::int64_t>(values.size())}});
  for (std::size_t c = 0; c < values.size(); ++c) {
    tensor.data<float>()[c] = static_cast<float>(values[c]);
  }
  return tensor;
}

bool redirect_uses(Graph& graph, ValueId from, ValueId to) {
  if (graph.is_output(from)) {
    const auto& inputs = graph.inputs();
    bool to_is_input = std::find(inputs.begin(), inputs.end(), to) != inputs.end();
    if (to_is_input || graph.value(to).is_constant() || graph.is_output(to)) return false;
    std::swap(graph.value(to).name, graph.value(from).name);
  }
  graph.replace_uses(from, to);
  return true;
}

std::string unused_value_name(const Graph& graph, const std::string& base) {
  std::string name = base;
  for (int i = 1; graph.find_value(name); ++i) name = base + "_" + std::to_string(i);
  return name;
}

namespace {

bool same_tensor(const Tensor& a, const Tensor& b) {
  if (a.type() != b.type()) return false;
  return std::memcmp(a.raw(), b.raw(), a.byte_size()) == 0;
}

}  // namespace

bool same_attributes(const Attributes& a, const Attributes& b) {
  if (a.all().size() != b.all().size()) return false;
  auto ia = a.all().begin();
  auto ib = b.all().begin();
  for (; ia != a.all().end(); ++ia, ++ib) {
    if (ia->first != ib->first || ia->second.index() != ib->second.index()) return false;
    const bool equal = std::visit(
        [&](const auto& value) {
          using T = std::decay_t<decltype(value)>;
          const T& other = std::get<T>(ib->second);
          if constexpr (std::is_same_v<T, Tensor>) {
            return same_tensor(value, other);
          } else {
            return value == other;
          }
        },
        ia->second);
    if (!equal) return false;
  }
  return true;
}

}  // namespace collage
