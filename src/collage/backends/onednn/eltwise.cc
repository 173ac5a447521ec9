#include "collage/backends/onednn/eltwise.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>

#include "collage/backends/onednn/node_checks.h"

namespace collage::onednn {
namespace {

using dnnl::algorithm;

constexpr std::array<std::string_view, 18> kActivations = {
    "Relu",        "LeakyRelu", "Sigmoid", "Tanh",  "Clip", "HardSwish",
    "HardSigmoid", "Elu",       "Exp",     "Log",   "Sqrt", "Abs",
    "Neg",         "Softplus",  "Gelu",    "Swish", "Pow",  "Reciprocal"};

Result<std::vector<EltwiseStep>> clip_steps(const Graph& graph, const Node& node) {
  float low = std::numeric_limits<float>::lowest();
  float high = std::numeric_limits<float>::max();
  if (graph.opset < 11) {
    low = node.attributes.get_float("min", low);
    high = node.attributes.get_float("max", high);
  } else {
    for (std::size_t i = 1; i <= 2; ++i) {
      if (node.input(i) == kNoValue) continue;
      std::optional<float> bound = scalar_constant(graph, node.input(i));
      if (!bound) return Failure{"Clip bounds must be constant float32 scalars"};
      (i == 1 ? low : high) = *bound;
    }
  }
  // ONNX clamps to max when min > max; oneDNN's clip has no such rule.
  if (low > high) return Failure{"Clip with min > max"};
  return std::vector<EltwiseStep>{{algorithm::eltwise_clip, low, high}};
}

Result<std::vector<EltwiseStep>> pow_steps(const Graph& graph, const Node& node) {
  std::optional<float> exponent = scalar_constant(graph, node.input(1));
  if (!exponent) return Failure{"Pow exponent must be a constant float32 scalar"};
  // oneDNN computes pow through exp/log except for a few exponents; only
  // those are exact for negative bases.
  constexpr std::array<float, 6> kExact = {0.5f, 1.f, 2.f, 3.f, -1.f, -0.5f};
  if (std::find(kExact.begin(), kExact.end(), *exponent) == kExact.end()) {
    return Failure{fmt::format("Pow exponent {} is not one oneDNN computes exactly", *exponent)};
  }
  return std::vector<EltwiseStep>{{algorithm::eltwise_pow, 1.f, *exponent}};
}

}  // namespace

std::vector<EltwiseStep> gelu_erf_steps() { return {{algorithm::eltwise_gelu_erf, 0.f, 0.f}}; }

Result<std::vector<EltwiseStep>> eltwise_steps(const Graph& graph, const Node& node) {
  if (!is_activation(node.op_type) || !in_onnx_domain(node)) {
    return Failure{fmt::format("{} is not an eltwise op", node.op_type)};
  }
  const std::size_t max_inputs = node.op_type == "Clip" ? 3 : node.op_type == "Pow" ? 2 : 1;
  if (auto problem = tensor_problem(graph, node, max_inputs)) return Failure{*problem};
  if (node.outputs.size() != 1 || node.input(0) == kNoValue) {
    return Failure{fmt::format("{} must have one input and one output", node.op_type)};
  }
  if (graph.type(node.input(0)).shape != graph.type(node.outputs[0]).shape) {
    return Failure{fmt::format("{} changes the shape", node.op_type)};
  }
  const Attributes& attrs = node.attributes;
  const std::string& op = node.op_type;
  using Steps = std::vector<EltwiseStep>;
  if (op == "Relu") return Steps{{algorithm::eltwise_relu, 0.f, 0.f}};
  if (op == "LeakyRelu")
    return Steps{{algorithm::eltwise_relu, attrs.get_float("alpha", 0.01f), 0.f}};
  if (op == "Sigmoid") return Steps{{algorithm::eltwise_logistic, 0.f, 0.f}};
  if (op == "Tanh") return Steps{{algorithm::eltwise_tanh, 0.f, 0.f}};
  if (op == "Elu") return Steps{{algorithm::eltwise_elu, attrs.get_float("alpha", 1.f), 0.f}};
  if (op == "Exp") return Steps{{algorithm::eltwise_exp, 0.f, 0.f}};
  if (op == "Log") return Steps{{algorithm::eltwise_log, 0.f, 0.f}};
  if (op == "Sqrt") return Steps{{algorithm::eltwise_sqrt, 0.f, 0.f}};
  if (op == "Abs") return Steps{{algorithm::eltwise_abs, 0.f, 0.f}};
  if (op == "Neg") return Steps{{algorithm::eltwise_linear, -1.f, 0.f}};
  if (op == "Softplus") return Steps{{algorithm::eltwise_soft_relu, 0.f, 0.f}};
  if (op == "HardSwish") return Steps{{algorithm::eltwise_hardswish, 0.f, 0.f}};
  // x * sigmoid(alpha * x), oneDNN's swish with the same alpha.
  if (op == "Swish") return Steps{{algorithm::eltwise_swish, attrs.get_float("alpha", 1.f), 0.f}};
  if (op == "Reciprocal") return Steps{{algorithm::eltwise_pow, 1.f, -1.f}};
  if (op == "HardSigmoid") {
    // max(0, min(1, alpha * x + beta)); oneDNN 2.6 has no hardsigmoid.
    return Steps{
        {algorithm::eltwise_linear, attrs.get_float("alpha", 0.2f), attrs.get_float("beta", 0.5f)},
        {algorithm::eltwise_clip, 0.f, 1.f}};
  }
  if (op == "Gelu") {
    const std::string approximate = attrs.get_string("approximate", "none");
    if (approximate == "none") return gelu_erf_steps();
    if (approximate == "tanh") return Steps{{algorithm::eltwise_gelu_tanh, 0.f, 0.f}};
    return Failure{fmt::format("Gelu approximate='{}'", approximate)};
  }
  if (op == "Clip") return clip_steps(graph, node);
  return pow_steps(graph, node);
}

bool is_activation(std::string_view op_type) {
  return std::find(kActivations.begin(), kActivations.end(), op_type) != kActivations.end();
}

std::vector<std::string> activation_ops() {
  return std::vector<std::string>(kActivations.begin(), kActivations.end());
}

void emit_eltwise(ProgramBuilder& builder, ValueId input, ValueId output,
                  const std::vector<EltwiseStep>& steps) {
  const memory::desc layout = builder.desc(input);
  memory src = builder.read(input, layout);
  memory dst = builder.output_memory(output, layout);
  for (const EltwiseStep& step : steps) {
    dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, step.algorithm, layout,
                                     step.alpha, step.beta);
    dnnl::eltwise_forward::primitive_desc pd(desc, builder.engine());
    builder.add(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    // Later steps run in place on the result.
    src = dst;
  }
  builder.define(output, dst);
}

}  // namespace collage::onednn
