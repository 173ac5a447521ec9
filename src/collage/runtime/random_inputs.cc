#include "collage/runtime/random_inputs.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <numbers>
#include <optional>
#include <string>

#include "collage/ir/control_flow.h"
#include "collage/ir/structural_hash.h"

namespace collage {
namespace {

// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and the same on every
// platform, unlike std::uniform_real_distribution.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, bound); the modulo bias is below 2^-40 for any bound a
  // tensor index can have, which is irrelevant here.
  std::int64_t below(std::int64_t bound) {
    return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(bound));
  }

 private:
  std::uint64_t state_;
};

// FNV-1a, so that an input's data depends on its name, not its position.
std::uint64_t hash_name(const std::string& name) { return fnv1a_64(name); }

double draw_float(SplitMix64& rng, FloatDistribution distribution) {
  if (distribution == FloatDistribution::kUniform) return 2.0 * rng.unit() - 1.0;
  // Box-Muller; 1 - unit() lies in (0, 1], so the log is finite.
  double radius = std::sqrt(-2.0 * std::log(1.0 - rng.unit()));
  return radius * std::cos(2.0 * std::numbers::pi * rng.unit());
}

template <typename T>
void fill_floats(Tensor& tensor, SplitMix64& rng, FloatDistribution distribution) {
  T* data = tensor.data<T>();
  for (std::int64_t i = 0; i < tensor.numel(); ++i) {
    data[i] = static_cast<T>(draw_float(rng, distribution));
  }
}

template <typename T>
void fill_ints(Tensor& tensor, SplitMix64& rng, std::int64_t bound) {
  T* data = tensor.data<T>();
  for (std::int64_t i = 0; i < tensor.numel(); ++i) data[i] = static_cast<T>(rng.below(bound));
}

// IEEE half from a float in [-8, 8] (what the distributions produce, bar
// extreme normal tails, which are clamped): round to nearest even.
std::uint16_t to_half(float value) {
  value = std::clamp(value, -8.0f, 8.0f);
  std::uint32_t bits = 0;
  static_assert(sizeof(bits) == sizeof(value));
  std::memcpy(&bits, &value, sizeof(bits));
  std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  std::int32_t exponent = static_cast<std::int32_t>((bits >> 23) & 0xff) - 127 + 15;
  std::uint32_t mantissa = bits & 0x7fffffu;
  if (exponent <= 0) {
    // Subnormal or zero in half precision.
    if (exponent < -10) return sign;
    mantissa |= 0x800000u;
    std::uint32_t shift = static_cast<std::uint32_t>(14 - exponent);
    std::uint32_t half = mantissa >> shift;
    std::uint32_t rest = mantissa & ((1u << shift) - 1);
    std::uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = (static_cast<std::uint32_t>(exponent) << 10) | (mantissa >> 13);
  std::uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<std::uint16_t>(sign | half);
}

}  // namespace

Tensor random_tensor_bounded(const TensorType& type, const std::string& name, std::int64_t bound,
                             const RandomOptions& options) {
  assert(bound > 0 && "random_tensor_bounded: the bound must be positive");
  SplitMix64 rng(options.seed ^ hash_name(name));
  Tensor tensor = Tensor::allocate(type);
  switch (type.dtype) {
    case DType::kFloat32:
      fill_floats<float>(tensor, rng, options.floats);
      break;
    case DType::kFloat64:
      fill_floats<double>(tensor, rng, options.floats);
      break;
    case DType::kFloat16: {
      auto* data = static_cast<std::uint16_t*>(tensor.raw());
      for (std::int64_t i = 0; i < tensor.numel(); ++i) {
        data[i] = to_half(static_cast<float>(draw_float(rng, options.floats)));
      }
      break;
    }
    case DType::kInt8:
      fill_ints<std::int8_t>(tensor, rng, std::min<std::int64_t>(bound, 128));
      break;
    case DType::kUInt8:
      fill_ints<std::uint8_t>(tensor, rng, std::min<std::int64_t>(bound, 256));
      break;
    case DType::kInt16:
      fill_ints<std::int16_t>(tensor, rng, std::min<std::int64_t>(bound, 32768));
      break;
    case DType::kInt32:
      fill_ints<std::int32_t>(tensor, rng, std::min<std::int64_t>(bound, 1LL << 31));
      break;
    case DType::kInt64:
      fill_ints<std::int64_t>(tensor, rng, bound);
      break;
    case DType::kBool: {
      auto* data = static_cast<std::uint8_t*>(tensor.raw());
      for (std::int64_t i = 0; i < tensor.numel(); ++i) data[i] = rng.next() >> 63;
      break;
    }
  }
  return tensor;
}

Tensor random_tensor(const TensorType& type, const std::string& name,
                     const RandomOptions& options) {
  return random_tensor_bounded(type, name, options.int_bound, options);
}

namespace {

// The extent an index read by `node` as its input 1 must stay under, or
// nullopt when the node reads no indices there: the gathered or scattered
// axis, or for tuples of length k (GatherND, ScatterND) the smallest of the
// k axes they address.
std::optional<std::int64_t> indexed_extent(const Graph& graph, const Node& node) {
  if (!node.domain.empty() || node.input(0) == kNoValue || node.inputs.size() < 2) {
    return std::nullopt;
  }
  const Shape& data = graph.type(node.input(0)).shape;
  const auto rank = static_cast<std::int64_t>(data.size());
  const std::string& op = node.op_type;
  if (op == "Gather" || op == "GatherElements" || op == "ScatterElements" || op == "Scatter") {
    std::int64_t axis = node.attributes.get_int("axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return std::nullopt;
    return data[static_cast<std::size_t>(axis)];
  }
  if (op == "GatherND" || op == "ScatterND") {
    const Shape& indices = graph.type(node.input(1)).shape;
    if (indices.empty() || indices.back() < 1) return std::nullopt;
    const std::int64_t first = op == "GatherND" ? node.attributes.get_int("batch_dims", 0) : 0;
    const std::int64_t last = first + indices.back();
    if (first < 0 || last > rank) return std::nullopt;
    std::int64_t extent = data[static_cast<std::size_t>(first)];
    for (std::int64_t d = first; d < last; ++d) {
      extent = std::min(extent, data[static_cast<std::size_t>(d)]);
    }
    return extent;
  }
  return std::nullopt;
}

// A tensor of integer or bool `type` with every element `number`; nullopt
// for other types.
std::optional<Tensor> filled(const TensorType& type, std::int64_t number) {
  Tensor tensor = Tensor::allocate(type);
  auto fill = [&]<typename T>(T*) {
    std::fill_n(tensor.data<T>(), tensor.numel(), static_cast<T>(number));
  };
  switch (type.dtype) {
    case DType::kBool:
    case DType::kUInt8:
      fill(static_cast<std::uint8_t*>(nullptr));
      break;
    case DType::kInt8:
      fill(static_cast<std::int8_t*>(nullptr));
      break;
    case DType::kInt16:
      fill(static_cast<std::int16_t*>(nullptr));
      break;
    case DType::kInt32:
      fill(static_cast<std::int32_t*>(nullptr));
      break;
    case DType::kInt64:
      fill(static_cast<std::int64_t*>(nullptr));
      break;
    default:
      return std::nullopt;
  }
  return tensor;
}

// Where an If can take only one of its branches for the graph's shapes
// (the other cannot be typed for them: a model with a branch per sample
// rate, each made for its own input length), a condition the inputs
// decide is drawn to take that branch: a bool graph input that is the
// condition, through any Nots, or a one-element integer graph input that
// an Equal compares with a constant to make it (set to the constant, or to
// one more than it).
void steer_to_runnable_branches(const Graph& graph, std::map<std::string, Tensor>& inputs) {
  for (const Node& node : graph.nodes()) {
    if (node.op_type != "If" || !is_control_flow(node) || node.input(0) == kNoValue) continue;
    const std::vector<const Graph*> branches = bodies(node);
    if (branches.size() != 2 || is_typed(*branches[0]) == is_typed(*branches[1])) continue;
    bool wanted = is_typed(*branches[0]);
    ValueId condition = node.input(0);
    while (graph.value(condition).producer != kNoNode) {
      const Node& producer = graph.node(graph.value(condition).producer);
      if (producer.op_type != "Not" || !producer.domain.empty()) break;
      wanted = !wanted;
      condition = producer.input(0);
    }
    const Value& value = graph.value(condition);
    if (value.producer == kNoNode && !value.is_constant()) {
      auto it = inputs.find(value.name);
      std::optional<Tensor> steered = filled(value.type, wanted ? 1 : 0);
      if (it != inputs.end() && steered) it->second = std::move(*steered);
      continue;
    }
    if (value.producer == kNoNode) continue;
    const Node& equal = graph.node(value.producer);
    if (equal.op_type != "Equal" || !equal.domain.empty() || equal.inputs.size() != 2) continue;
    for (std::size_t side = 0; side < 2; ++side) {
      const Value& operand = graph.value(equal.inputs[side]);
      const Value& other = graph.value(equal.inputs[1 - side]);
      if (operand.producer != kNoNode || operand.is_constant() || !other.is_constant() ||
          other.constant->numel() != 1 || operand.type.numel() != 1) {
        continue;
      }
      auto it = inputs.find(operand.name);
      const DType dtype = other.constant->dtype();
      if (it == inputs.end() || dtype == DType::kFloat32 || dtype == DType::kFloat64 ||
          dtype == DType::kFloat16) {
        continue;
      }
      const std::int64_t compared = other.constant->int_at(0);
      std::optional<Tensor> steered = filled(operand.type, wanted ? compared : compared + 1);
      if (steered) it->second = std::move(*steered);
    }
  }
}

}  // namespace

std::int64_t index_bound(const Graph& graph, ValueId value, std::int64_t fallback) {
  std::int64_t bound = fallback;
  for (const Node& node : graph.nodes()) {
    if (node.input(1) != value) continue;
    const std::optional<std::int64_t> extent = indexed_extent(graph, node);
    if (extent && *extent > 0) bound = std::min(bound, *extent);
  }
  return bound;
}

std::map<std::string, Tensor> random_inputs(const Graph& graph, const RandomOptions& options) {
  std::map<std::string, Tensor> inputs;
  for (ValueId id : graph.inputs()) {
    const Value& value = graph.value(id);
    std::int64_t bound = index_bound(graph, id, options.int_bound);
    inputs.emplace(value.name, random_tensor_bounded(value.type, value.name, bound, options));
  }
  steer_to_runnable_branches(graph, inputs);
  return inputs;
}

}  // namespace collage
