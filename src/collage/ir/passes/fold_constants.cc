#include "collage/ir/passes/fold_constants.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <vector>

#include "collage/ir/error.h"
#include "collage/ir/passes/partial_type.h"

namespace collage {
namespace {

// Ops whose outputs differ from run to run.
bool is_random(const Node& node) {
  static constexpr std::array<std::string_view, 6> kRandom = {"RandomNormal",  "RandomNormalLike",
                                                              "RandomUniform", "RandomUniformLike",
                                                              "Bernoulli",     "Multinomial"};
  return std::find(kRandom.begin(), kRandom.end(), node.op_type) != kRandom.end();
}

bool defines_graph_output(const Graph& graph, const Node& node) {
  return std::any_of(node.outputs.begin(), node.outputs.end(),
                     [&](ValueId v) { return graph.is_output(v); });
}

// Shape and Size depend only on the input's type, which may be static even
// when its data is not.
std::optional<Tensor> fold_from_type(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || node.input(0) == kNoValue || node.outputs.size() != 1) {
    return std::nullopt;
  }
  const TensorType& type = graph.type(node.inputs[0]);
  if (!is_static(type)) return std::nullopt;
  if (node.op_type == "Size") {
    return Tensor::from_vector<std::int64_t>({type.numel()}, {});
  }
  // Opset 15 added start and end (Python-style, clamped) to Shape.
  const std::int64_t rank = type.rank();
  auto clamp_axis = [rank](std::int64_t axis) {
    if (axis < 0) axis += rank;
    return std::clamp<std::int64_t>(axis, 0, rank);
  };
  std::int64_t start = clamp_axis(node.attributes.get_int("start", 0));
  std::int64_t end = clamp_axis(node.attributes.get_int("end", rank));
  std::vector<std::int64_t> dims;
  for (std::int64_t i = start; i < end; ++i)
    dims.push_back(type.shape[static_cast<std::size_t>(i)]);
  auto count = static_cast<std::int64_t>(dims.size());
  return Tensor::from_vector<std::int64_t>(dims, {count});
}

// A Gather of dimensions from a Shape, where those dimensions are known even
// though others are not: torchvision's "squeeze if this dimension is 1"
// reads a dimension that is 1 in every run, of a value whose other
// dimension the data decides.
std::optional<Tensor> fold_known_dims(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 2 || node.outputs.size() != 1 || node.input(0) == kNoValue ||
      node.input(1) == kNoValue || node.attributes.get_int("axis", 0) != 0) {
    return std::nullopt;
  }
  const Value& shape = graph.value(node.input(0));
  const Value& index = graph.value(node.input(1));
  if (shape.producer == kNoNode || !index.is_constant()) return std::nullopt;
  const Node& producer = graph.node(shape.producer);
  if (producer.op_type != "Shape" || !producer.domain.empty() || producer.inputs.size() != 1 ||
      producer.input(0) == kNoValue || producer.attributes.has("start") ||
      producer.attributes.has("end")) {
    return std::nullopt;
  }
  const TensorType& type = graph.type(producer.input(0));
  if (!has_known_rank(type)) return std::nullopt;
  const auto rank = static_cast<std::int64_t>(type.shape.size());
  std::vector<std::int64_t> dims;
  for (std::int64_t i = 0; i < index.constant->numel(); ++i) {
    std::int64_t axis = index.constant->int_at(i);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank || type.shape[static_cast<std::size_t>(axis)] < 0)
      return std::nullopt;
    dims.push_back(type.shape[static_cast<std::size_t>(axis)]);
  }
  return Tensor::from_vector<std::int64_t>(dims, index.constant->shape());
}

bool all_static(const Graph& graph, const std::vector<ValueId>& values) {
  return std::all_of(values.begin(), values.end(),
                     [&](ValueId v) { return v == kNoValue || is_static(graph.type(v)); });
}

// Whether the evaluator path applies, short of asking the evaluator.
bool foldable(const Graph& graph, const Node& node, const FoldOptions& options) {
  if (is_random(node)) return false;
  bool any_input = false;
  std::int64_t input_elements = 0;
  for (ValueId v : node.inputs) {
    if (v == kNoValue) continue;
    if (!graph.value(v).is_constant()) return false;
    any_input = true;
    input_elements += graph.type(v).numel();
  }
  if (!any_input) return false;
  if (!all_static(graph, node.inputs) || !all_static(graph, node.outputs)) return false;
  const std::int64_t limit = std::max(options.max_elements, input_elements);
  return std::all_of(node.outputs.begin(), node.outputs.end(),
                     [&](ValueId v) { return graph.type(v).numel() <= limit; });
}

std::vector<Tensor> evaluate(const Graph& graph, const Node& node, const OpEvaluator& evaluator) {
  std::vector<Tensor> inputs;
  inputs.reserve(node.inputs.size());
  for (ValueId v : node.inputs) {
    inputs.push_back(v == kNoValue ? Tensor() : *graph.value(v).constant);
  }
  std::vector<Tensor> outputs;
  try {
    outputs = evaluator.evaluate(graph, node, inputs);
  } catch (const Error& error) {
    if (!error.where().node.empty()) throw;
    Error::Where where = error.where();
    where.node = node.name;
    throw Error("constant folding failed: " + error.message(), where);
  }
  if (outputs.size() != node.outputs.size()) {
    throw Error(
        fmt::format("constant folding gave {} outputs for {}", outputs.size(), node.outputs.size()),
        {.node = node.name});
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const TensorType& expected = graph.type(node.outputs[i]);
    if (outputs[i].type() != expected) {
      throw Error(fmt::format("constant folding gave {} where shape inference says {}",
                              outputs[i].type().to_string(), expected.to_string()),
                  {.node = node.name, .field = "output " + std::to_string(i)});
    }
  }
  return outputs;
}

}  // namespace

int fold_constants(Graph& graph, const OpEvaluator* evaluator, const FoldOptions& options) {
  std::vector<NodeId> folded;
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(static_cast<NodeId>(n));
    if (!node.domain.empty() || defines_graph_output(graph, node)) continue;
    if (options.keep_dequantize && node.op_type == "DequantizeLinear") continue;
    std::vector<Tensor> results;
    if (node.op_type == "Shape" || node.op_type == "Size" || node.op_type == "Gather") {
      std::optional<Tensor> result =
          node.op_type == "Gather" ? fold_known_dims(graph, node) : fold_from_type(graph, node);
      if (result) results.push_back(std::move(*result));
    }
    if (results.empty()) {
      if (evaluator == nullptr || !foldable(graph, node, options)) continue;
      if (!evaluator->can_evaluate(graph, node)) continue;
      results = evaluate(graph, node, *evaluator);
    }
    for (std::size_t i = 0; i < results.size(); ++i) {
      Value& value = graph.value(node.outputs[i]);
      value.type = results[i].type();
      value.constant = std::move(results[i]);
    }
    folded.push_back(static_cast<NodeId>(n));
  }
  if (!folded.empty()) graph.erase_nodes(folded);
  return static_cast<int>(folded.size());
}

}  // namespace collage
