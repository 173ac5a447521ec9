#include "collage/backends/onednn/node_checks.h"

#include <fmt/format.h>

#include <cmath>
#include <dnnl.hpp>

namespace collage::onednn {

bool in_onnx_domain(const Node& node) { return node.domain.empty() || node.domain == "ai.onnx"; }

std::string qualified_op_type(const Node& node) {
  return in_onnx_domain(node) ? node.op_type : node.domain + "." + node.op_type;
}

const Tensor* constant_input(const Graph& graph, const Node& node, std::size_t i) {
  if (i >= node.inputs.size() || node.input(i) == kNoValue) return nullptr;
  const Value& value = graph.value(node.input(i));
  return value.is_constant() ? &*value.constant : nullptr;
}

std::optional<double> scalar_input(const Graph& graph, const Node& node, std::size_t i) {
  const Tensor* value = constant_input(graph, node, i);
  if (value == nullptr || value->numel() != 1) return std::nullopt;
  return value->number_at(0);
}

std::optional<double> zero_point_input(const Graph& graph, const Node& node, std::size_t i) {
  if (node.input(i) == kNoValue) return 0.0;
  return scalar_input(graph, node, i);
}

std::optional<dnnl::memory::data_type> eight_bit_type(DType dtype) {
  if (dtype == DType::kUInt8) return dnnl::memory::data_type::u8;
  if (dtype == DType::kInt8) return dnnl::memory::data_type::s8;
  return std::nullopt;
}

std::optional<std::string> tensor_problem(const Graph& graph, const Node& node,
                                          std::size_t max_inputs) {
  auto check = [&](ValueId value, const char* role) -> std::optional<std::string> {
    const TensorType& type = graph.type(value);
    if (type.dtype != DType::kFloat32) {
      return fmt::format("{} '{}' is {}, oneDNN runs float32 only", role, graph.value(value).name,
                         dtype_name(type.dtype));
    }
    if (type.rank() > DNNL_MAX_NDIMS) {
      return fmt::format("{} '{}' has rank {} > {}", role, graph.value(value).name, type.rank(),
                         DNNL_MAX_NDIMS);
    }
    if (type.numel() == 0) return fmt::format("{} '{}' is empty", role, graph.value(value).name);
    return std::nullopt;
  };
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == kNoValue) continue;
    if (i >= max_inputs) return fmt::format("{} input {} is not supported", node.op_type, i);
    if (auto problem = check(node.inputs[i], "input")) return problem;
  }
  for (ValueId output : node.outputs) {
    if (output == kNoValue) continue;
    if (auto problem = check(output, "output")) return problem;
  }
  return std::nullopt;
}

std::optional<float> scalar_constant(const Graph& graph, ValueId value) {
  if (value == kNoValue) return std::nullopt;
  const Value& v = graph.value(value);
  if (!v.is_constant() || v.constant->dtype() != DType::kFloat32 || v.constant->numel() != 1) {
    return std::nullopt;
  }
  return v.constant->data<float>()[0];
}

bool is_scalar_near(const Graph& graph, ValueId value, double expected) {
  std::optional<float> scalar = scalar_constant(graph, value);
  return scalar && std::abs(*scalar - expected) <= 1e-4 * std::abs(expected);
}

}  // namespace collage::onednn
