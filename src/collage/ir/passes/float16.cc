#include "collage/ir/passes/float16.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collage/ir/passes/rewrite_util.h"

namespace collage {
namespace {

// ONNX TensorProto element types named by Cast's `to` and the `dtype`
// attributes.
constexpr std::int64_t kOnnxFloat = 1;
constexpr std::int64_t kOnnxFloat16 = 10;

Tensor to_float32(const Tensor& half) {
  Tensor out = Tensor::allocate(TensorType{DType::kFloat32, half.shape()});
  const auto* x = static_cast<const std::uint16_t*>(half.raw());
  float* y = out.data<float>();
  const std::int64_t n = half.numel();
  for (std::int64_t i = 0; i < n; ++i) y[i] = _cvtsh_ss(x[i]);
  return out;
}

bool is_half(const TensorType& type) { return type.dtype == DType::kFloat16; }

// Whether attribute `name` of `node` names an output element type.
bool names_type(const Node& node, const std::string& name) {
  return (node.op_type == "Cast" && name == "to") || name == "dtype";
}

// Whether an attribute holds a float16 tensor (Constant's and
// ConstantOfShape's `value`) or names float16 as an output type.
bool is_half_attribute(const Node& node, const std::string& name, const AttributeValue& value) {
  if (const auto* tensor = std::get_if<Tensor>(&value)) {
    return tensor->dtype() == DType::kFloat16;
  }
  const auto* number = std::get_if<std::int64_t>(&value);
  return number != nullptr && *number == kOnnxFloat16 && names_type(node, name);
}

// The float32 form of an attribute is_half_attribute() accepts.
AttributeValue widened(const AttributeValue& value) {
  if (const auto* tensor = std::get_if<Tensor>(&value)) return to_float32(*tensor);
  return kOnnxFloat;
}

bool holds_half(const Graph& graph) {
  for (const Value& value : graph.values()) {
    if (is_half(value.type)) return true;
  }
  for (const Node& node : graph.nodes()) {
    for (const auto& [name, value] : node.attributes.all()) {
      if (is_half_attribute(node, name, value)) return true;
    }
  }
  return false;
}

// Points every input of `readers` that is `from` at `to`.
void reread(Graph& graph, const std::vector<NodeId>& readers, ValueId from, ValueId to) {
  for (NodeId reader : readers) {
    for (ValueId& input : graph.node(reader).inputs) {
      if (input == from) input = to;
    }
  }
}

Attributes cast_to(std::int64_t onnx_type) {
  Attributes attributes;
  attributes.set("to", onnx_type);
  return attributes;
}

}  // namespace

int compute_float16_in_float32(Graph& graph) {
  if (!holds_half(graph)) return 0;
  int changed = 0;
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    Node& node = graph.node(static_cast<NodeId>(n));
    std::vector<std::pair<std::string, AttributeValue>> wide;
    for (const auto& [name, value] : node.attributes.all()) {
      if (is_half_attribute(node, name, value)) wide.emplace_back(name, widened(value));
    }
    for (auto& [name, value] : wide) node.attributes.set(name, std::move(value));
    changed += static_cast<int>(wide.size());
  }

  // The values that keep float16: the model's interface.
  std::set<ValueId> interface;
  const std::vector<std::vector<NodeId>> readers = graph.consumers();
  // Graph inputs: the model reads a float32 copy.
  for (ValueId input : std::vector<ValueId>(graph.inputs())) {
    if (!is_half(graph.type(input))) continue;
    interface.insert(input);
    const std::string name = graph.value(input).name;
    ValueId wide = graph.add_value(unused_value_name(graph, name + ":float32"),
                                   TensorType{DType::kFloat32, graph.type(input).shape});
    reread(graph, readers[static_cast<std::size_t>(input)], input, wide);
    graph.add_node("Cast", {input}, {wide}, cast_to(kOnnxFloat), name + ":to_float32");
  }
  // Graph outputs: the node that defined one defines a float32 value, which
  // a Cast narrows into the output the model names. An output that is an
  // input or a constant stays as it is.
  for (ValueId output : std::vector<ValueId>(graph.outputs())) {
    if (!is_half(graph.type(output))) continue;
    interface.insert(output);
    const NodeId producer = graph.value(output).producer;
    if (producer == kNoNode) continue;
    const std::string name = graph.value(output).name;
    ValueId wide = graph.add_value(unused_value_name(graph, name + ":float32"),
                                   TensorType{DType::kFloat32, graph.type(output).shape});
    for (ValueId& defined : graph.node(producer).outputs) {
      if (defined == output) defined = wide;
    }
    graph.value(wide).producer = producer;
    graph.value(output).producer = kNoNode;
    reread(graph, readers[static_cast<std::size_t>(output)], output, wide);
    graph.add_node("Cast", {wide}, {output}, cast_to(kOnnxFloat16), name + ":to_float16");
  }

  // Everything between: constants and node outputs.
  for (std::size_t v = 0; v < graph.num_values(); ++v) {
    const auto id = static_cast<ValueId>(v);
    Value& value = graph.value(id);
    if (!is_half(value.type) || interface.count(id) != 0) continue;
    if (value.constant) value.constant = to_float32(*value.constant);
    value.type.dtype = DType::kFloat32;
    ++changed;
  }
  graph.sort_topologically();
  return changed;
}

}  // namespace collage
