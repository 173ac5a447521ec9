#include "collage/backends/openblas/activation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "collage/ir/error.h"

namespace collage::openblas {
namespace {

constexpr std::array<std::string_view, 10> kActivationOps = {
    "Relu",        "LeakyRelu", "Clip", "Sigmoid", "Tanh",
    "HardSigmoid", "HardSwish", "Elu",  "Gelu",    "Swish"};

// A Clip bound given as an optional input (opset 11+): absent means unbounded.
Result<float> clip_bound(const Graph& graph, const Node& node, std::size_t index, float unbounded) {
  ValueId id = node.input(index);
  if (id == kNoValue) return unbounded;
  const Value& value = graph.value(id);
  if (!value.is_constant()) return Failure{"Clip bounds must be constants"};
  if (value.type.dtype != DType::kFloat32 || value.type.numel() != 1) {
    return Failure{"Clip bounds must be float32 scalars"};
  }
  return value.constant->data<float>()[0];
}

Result<Activation> parse(const Graph& graph, const Node& node) {
  const Attributes& attrs = node.attributes;
  const std::string& op = node.op_type;
  if (op == "Relu") return Activation{ActivationKind::kRelu};
  if (op == "Sigmoid") return Activation{ActivationKind::kSigmoid};
  if (op == "Tanh") return Activation{ActivationKind::kTanh};
  if (op == "HardSwish") return Activation{ActivationKind::kHardSwish};
  if (op == "LeakyRelu") {
    return Activation{ActivationKind::kLeakyRelu, attrs.get_float("alpha", 0.01f)};
  }
  if (op == "Elu") return Activation{ActivationKind::kElu, attrs.get_float("alpha", 1.0f)};
  if (op == "HardSigmoid") {
    return Activation{ActivationKind::kHardSigmoid, attrs.get_float("alpha", 0.2f),
                      attrs.get_float("beta", 0.5f)};
  }
  if (op == "Gelu") {
    std::string approximate = attrs.get_string("approximate", "none");
    if (approximate == "none") return Activation{ActivationKind::kGelu};
    if (approximate == "tanh") return Activation{ActivationKind::kGeluTanh};
    return Failure{"Gelu approximate=\"" + approximate + "\" is not supported"};
  }
  if (op == "Swish") return Activation{ActivationKind::kSwish, attrs.get_float("alpha", 1.0f)};
  if (op == "Clip") {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    if (graph.opset < 11) {
      return Activation{ActivationKind::kClip, attrs.get_float("min", -kInf),
                        attrs.get_float("max", kInf)};
    }
    Result<float> lo = clip_bound(graph, node, 1, -kInf);
    if (!lo) return Failure{lo.error()};
    Result<float> hi = clip_bound(graph, node, 2, kInf);
    if (!hi) return Failure{hi.error()};
    return Activation{ActivationKind::kClip, *lo, *hi};
  }
  return Failure{op + " is not an activation the openblas backend fuses"};
}

}  // namespace

void Activation::apply(float* data, std::int64_t count) const {
  switch (kind) {
    case ActivationKind::kRelu:
      for (std::int64_t i = 0; i < count; ++i) data[i] = std::max(data[i], 0.0f);
      return;
    case ActivationKind::kLeakyRelu:
      for (std::int64_t i = 0; i < count; ++i) data[i] = data[i] < 0.0f ? alpha * data[i] : data[i];
      return;
    case ActivationKind::kClip:
      for (std::int64_t i = 0; i < count; ++i) data[i] = std::min(std::max(data[i], alpha), beta);
      return;
    case ActivationKind::kSigmoid:
      for (std::int64_t i = 0; i < count; ++i) data[i] = 1.0f / (1.0f + std::exp(-data[i]));
      return;
    case ActivationKind::kTanh:
      for (std::int64_t i = 0; i < count; ++i) data[i] = std::tanh(data[i]);
      return;
    case ActivationKind::kHardSigmoid:
      for (std::int64_t i = 0; i < count; ++i) {
        data[i] = std::min(std::max(alpha * data[i] + beta, 0.0f), 1.0f);
      }
      return;
    case ActivationKind::kHardSwish:
      for (std::int64_t i = 0; i < count; ++i) {
        data[i] *= std::min(std::max(data[i] / 6.0f + 0.5f, 0.0f), 1.0f);
      }
      return;
    case ActivationKind::kElu:
      for (std::int64_t i = 0; i < count; ++i) {
        data[i] = data[i] < 0.0f ? alpha * (std::exp(data[i]) - 1.0f) : data[i];
      }
      return;
    case ActivationKind::kGelu:
      for (std::int64_t i = 0; i < count; ++i) {
        data[i] = 0.5f * data[i] * (1.0f + std::erf(data[i] * static_cast<float>(M_SQRT1_2)));
      }
      return;
    case ActivationKind::kGeluTanh: {
      constexpr float kSqrt2OverPi = 0.7978845608028654f;
      for (std::int64_t i = 0; i < count; ++i) {
        float x = data[i];
        data[i] = 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
      }
      return;
    }
    case ActivationKind::kSwish:
      // x / (1 + e^(-alpha x)): where the exponential overflows the quotient
      // is the correct limit, 0 with x's sign.
      for (std::int64_t i = 0; i < count; ++i) {
        data[i] = data[i] / (1.0f + std::exp(-alpha * data[i]));
      }
      return;
  }
}

std::span<const std::string_view> activation_ops() { return kActivationOps; }

bool is_activation_op(std::string_view op_type) {
  return std::find(kActivationOps.begin(), kActivationOps.end(), op_type) != kActivationOps.end();
}

Result<Activation> activation_from_node(const Graph& graph, const Node& node) {
  if (!node.domain.empty() && node.domain != "ai.onnx")
    return Failure{"op domain '" + node.domain + "' is not supported"};
  if (!is_activation_op(node.op_type)) {
    return Failure{node.op_type + " is not an activation the openblas backend fuses"};
  }
  if (node.outputs.size() != 1 || node.input(0) == kNoValue) {
    return Failure{node.op_type + " must have one input and one output"};
  }
  const TensorType& in = graph.type(node.input(0));
  const TensorType& out = graph.type(node.outputs[0]);
  if (in.dtype != DType::kFloat32 || out != in) {
    return Failure{node.op_type + " must map float32 to float32 of the same shape"};
  }
  try {
    return parse(graph, node);
  } catch (const Error& error) {
    return Failure{node.op_type + ": " + error.what()};
  }
}

}  // namespace collage::openblas
