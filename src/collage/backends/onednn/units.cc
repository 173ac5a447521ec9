#include "collage/backends/onednn/units.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "collage/backends/onednn/node_checks.h"

namespace collage::onednn {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;

// The other input of a two-input `op_type` node reading `value`, or kNoValue.
ValueId other_input(const Graph& graph, NodeId id, const std::string& op_type, ValueId value) {
  const Node& node = graph.node(id);
  if (node.op_type != op_type || !in_onnx_domain(node) || node.inputs.size() != 2 ||
      node.outputs.size() != 1) {
    return kNoValue;
  }
  if (node.inputs[0] == value) return node.inputs[1];
  if (node.inputs[1] == value) return node.inputs[0];
  return kNoValue;
}

// The only consumer of `value`, if it has exactly one and is not a graph output.
std::optional<NodeId> sole_consumer(const Graph& graph, ValueId value,
                                    const std::vector<std::vector<NodeId>>& consumers) {
  const auto& users = consumers[static_cast<std::size_t>(value)];
  if (users.size() != 1 || graph.is_output(value)) return std::nullopt;
  return users[0];
}

bool is_half(const Graph& graph, ValueId value) { return is_scalar_near(graph, value, 0.5); }

}  // namespace

std::optional<GeluMatch> match_gelu_erf(const Graph& graph, NodeId erf,
                                        const std::vector<std::vector<NodeId>>& consumers) {
  const Node& erf_node = graph.node(erf);
  if (erf_node.op_type != "Erf" || erf_node.inputs.size() != 1 || erf_node.outputs.size() != 1) {
    return std::nullopt;
  }
  // x / sqrt(2) or x * (1 / sqrt(2)).
  const ValueId scaled = erf_node.inputs[0];
  const NodeId scale_node = graph.value(scaled).producer;
  if (scale_node == kNoNode || !sole_consumer(graph, scaled, consumers)) return std::nullopt;
  const Node& scale = graph.node(scale_node);
  if (scale.inputs.size() != 2) return std::nullopt;
  ValueId x = kNoValue;
  if (scale.op_type == "Div" && is_scalar_near(graph, scale.inputs[1], kSqrt2)) x = scale.inputs[0];
  for (int i = 0; i < 2 && scale.op_type == "Mul"; ++i) {
    if (is_scalar_near(graph, scale.inputs[static_cast<std::size_t>(1 - i)], 1.0 / kSqrt2)) {
      x = scale.inputs[static_cast<std::size_t>(i)];
    }
  }
  if (x == kNoValue) return std::nullopt;

  // 1 + erf(...)
  const ValueId erf_out = erf_node.outputs[0];
  std::optional<NodeId> add = sole_consumer(graph, erf_out, consumers);
  if (!add) return std::nullopt;
  ValueId one = other_input(graph, *add, "Add", erf_out);
  if (one == kNoValue || !is_scalar_near(graph, one, 1.0)) return std::nullopt;
  const ValueId plus_one = graph.node(*add).outputs[0];
  std::optional<NodeId> mul = sole_consumer(graph, plus_one, consumers);
  if (!mul) return std::nullopt;
  const ValueId factor = other_input(graph, *mul, "Mul", plus_one);
  if (factor == kNoValue) return std::nullopt;
  const ValueId product = graph.node(*mul).outputs[0];

  GeluMatch match{{scale_node, erf, *add, *mul}, x, kNoValue};
  if (factor == x || is_half(graph, factor)) {
    // (x * (1 + erf)) * 0.5, or x * ((1 + erf) * 0.5).
    std::optional<NodeId> last = sole_consumer(graph, product, consumers);
    if (!last) return std::nullopt;
    const ValueId rest = other_input(graph, *last, "Mul", product);
    if (rest == kNoValue || (factor == x ? !is_half(graph, rest) : rest != x)) return std::nullopt;
    match.nodes.push_back(*last);
    match.output = graph.node(*last).outputs[0];
  } else {
    // (x * 0.5) * (1 + erf).
    const NodeId half_node = graph.value(factor).producer;
    if (half_node == kNoNode || !sole_consumer(graph, factor, consumers)) return std::nullopt;
    const ValueId half = other_input(graph, half_node, "Mul", x);
    if (half == kNoValue || !is_half(graph, half)) return std::nullopt;
    match.nodes.push_back(half_node);
    match.output = product;
  }
  std::sort(match.nodes.begin(), match.nodes.end());
  return match;
}

std::vector<Unit> build_units(const Graph& graph) {
  const auto consumers = graph.consumers();
  std::vector<NodeId> owner(graph.num_nodes(), kNoNode);
  std::vector<Unit> units;
  for (std::size_t id = 0; id < graph.num_nodes(); ++id) {
    auto match = match_gelu_erf(graph, static_cast<NodeId>(id), consumers);
    if (!match) continue;
    bool free = std::all_of(match->nodes.begin(), match->nodes.end(), [&](NodeId n) {
      return owner[static_cast<std::size_t>(n)] == kNoNode;
    });
    if (!free) continue;
    for (NodeId n : match->nodes) owner[static_cast<std::size_t>(n)] = match->nodes.back();
    units.push_back(Unit{
        Unit::Kind::kGeluErf, match->nodes.back(), match->nodes, {match->input}, match->output});
  }
  for (std::size_t id = 0; id < graph.num_nodes(); ++id) {
    if (owner[id] != kNoNode) continue;
    const Node& node = graph.node(static_cast<NodeId>(id));
    Unit unit{Unit::Kind::kNode, static_cast<NodeId>(id), {static_cast<NodeId>(id)}, {}, kNoValue};
    for (ValueId input : node.inputs) {
      if (input != kNoValue &&
          std::find(unit.inputs.begin(), unit.inputs.end(), input) == unit.inputs.end()) {
        unit.inputs.push_back(input);
      }
    }
    unit.output = node.outputs.empty() ? kNoValue : node.outputs[0];
    units.push_back(std::move(unit));
  }
  std::sort(units.begin(), units.end(),
            [](const Unit& a, const Unit& b) { return a.node < b.node; });
  return units;
}

}  // namespace collage::onednn
