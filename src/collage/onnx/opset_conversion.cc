#include "collage/onnx/opset_conversion.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "collage/ir/error.h"
#include "collage/ir/passes/partial_type.h"

namespace collage {
namespace {

// The reductions whose axes became an input in opset 18 (ReduceSum's did in 13).
bool takes_axes_input_since_18(std::string_view op_type) {
  static constexpr std::array<std::string_view, 9> kOps = {
      "ReduceL1",   "ReduceL2",  "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
      "ReduceMean", "ReduceMin", "ReduceProd",   "ReduceSumSquare"};
  return std::find(kOps.begin(), kOps.end(), op_type) != kOps.end();
}

Tensor int64s(std::vector<std::int64_t> values) {
  const auto count = static_cast<std::int64_t>(values.size());
  return Tensor::from_vector<std::int64_t>(values, {count});
}

Attributes one_attribute(const std::string& name, AttributeValue value) {
  Attributes attributes;
  attributes.set(name, std::move(value));
  return attributes;
}

class Converter {
 public:
  explicit Converter(Graph& graph) : graph_(graph), source_(graph.opset) {
    for (const Node& node : graph.nodes()) node_names_.insert(node.name);
  }

  void run() {
    const std::size_t count = graph_.num_nodes();
    for (std::size_t n = 0; n < count; ++n) {
      auto id = static_cast<NodeId>(n);
      if (graph_.node(id).domain.empty()) convert(id);
    }
  }

 private:
  void convert(NodeId id) {
    const std::string op = graph_.node(id).op_type;
    if (takes_axes_input_since_18(op)) return reduce(id);
    if (op == "Split") return split(id);
    if (op == "Pad") return pad(id);
    if (op == "Resize") return resize(id);
    if (op == "GroupNormalization") return group_normalization(id);
    if (op == "AveragePool") return average_pool(id);
    // Opset 19's saturate only concerns float8 types, which import refuses.
    if (op == "Cast" || op == "CastLike") graph_.node(id).attributes.erase("saturate");
  }

  // Axes as an input (constant, since opset 17 wants them in an attribute);
  // with noop_with_empty_axes, no axes is no reduction at all.
  void reduce(NodeId id) {
    std::vector<std::int64_t> axes;
    if (ValueId input = graph_.node(id).input(1); input != kNoValue) {
      std::optional<Tensor> tensor = constant_data(input);
      if (!tensor) throw unsupported(id, "its axes input is not a constant", "input 1");
      for (std::int64_t i = 0; i < tensor->numel(); ++i) axes.push_back(tensor->int_at(i));
    }
    Node& node = graph_.node(id);
    const bool noop = node.attributes.get_int("noop_with_empty_axes", 0) != 0;
    node.attributes.erase("noop_with_empty_axes");
    node.inputs.resize(1);
    if (!axes.empty()) {
      node.attributes.set("axes", std::move(axes));
      return;
    }
    if (noop) {
      node.op_type = "Identity";
      node.attributes = Attributes();
    }
  }

  // num_outputs equal parts, the last smaller when the extent does not
  // divide: each ceil(extent / parts), the last what remains.
  void split(NodeId id) {
    Node& node = graph_.node(id);
    if (!node.attributes.has("num_outputs")) return;
    const std::int64_t parts = node.attributes.get_int("num_outputs");
    node.attributes.erase("num_outputs");
    if (node.input(1) != kNoValue) return;
    if (parts < 1) throw unsupported(id, "num_outputs is less than 1", "attribute 'num_outputs'");
    const std::int64_t axis = node.attributes.get_int("axis", 0);
    const ValueId x = node.inputs[0];
    const ValueId shape = add(id, "Shape", {x}, DType::kInt64);
    const ValueId extent = add(id, "Gather", {shape, constant(id, int64s({axis}))}, DType::kInt64,
                               one_attribute("axis", std::int64_t{0}));
    const ValueId rounded_up =
        add(id, "Add", {extent, constant(id, int64s({parts - 1}))}, DType::kInt64);
    const ValueId chunk =
        add(id, "Div", {rounded_up, constant(id, int64s({parts}))}, DType::kInt64);
    const ValueId leading =
        add(id, "Mul", {chunk, constant(id, int64s({parts - 1}))}, DType::kInt64);
    const ValueId last = add(id, "Sub", {extent, leading}, DType::kInt64);
    std::vector<ValueId> sizes(static_cast<std::size_t>(parts - 1), chunk);
    sizes.push_back(last);
    const ValueId split =
        add(id, "Concat", sizes, DType::kInt64, one_attribute("axis", std::int64_t{0}));
    Node& again = graph_.node(id);
    again.inputs.resize(2, kNoValue);
    again.inputs[1] = split;
  }

  // Pads for the listed axes only become pads for every axis, zero elsewhere.
  void pad(NodeId id) {
    Node& node = graph_.node(id);
    if (node.attributes.get_string("mode", "constant") == "wrap") {
      throw unsupported(id, "mode 'wrap' is not supported", "attribute 'mode'");
    }
    const ValueId axes = node.input(3);
    if (axes == kNoValue) return;
    node.inputs.resize(3, kNoValue);
    const ValueId pads = node.input(1);
    if (pads == kNoValue) return;
    const ValueId x = node.inputs[0];
    const ValueId rank = rank_of(id, x);
    const ValueId axis = normalized_axes(id, axes, rank);
    const ValueId end_axis = add(id, "Add", {axis, rank}, DType::kInt64);
    const ValueId positions =
        add(id, "Concat", {axis, end_axis}, DType::kInt64, one_attribute("axis", std::int64_t{0}));
    const ValueId count = add(id, "Mul", {rank, constant(id, int64s({2}))}, DType::kInt64);
    const ValueId zeros =
        add(id, "ConstantOfShape", {count}, DType::kInt64, one_attribute("value", int64s({0})));
    graph_.node(id).inputs[1] = scatter_into(id, zeros, positions, pads, DType::kInt64);
  }

  void resize(NodeId id) {
    Node& node = graph_.node(id);
    if (node.attributes.get_int("antialias", 0) != 0) {
      throw unsupported(id, "antialias=1 is not supported", "attribute 'antialias'");
    }
    if (node.attributes.get_string("keep_aspect_ratio_policy", "stretch") != "stretch") {
      throw unsupported(id, "a keep_aspect_ratio_policy other than 'stretch' is not supported",
                        "attribute 'keep_aspect_ratio_policy'");
    }
    const std::string mode = node.attributes.get_string("coordinate_transformation_mode", "");
    if (mode == "half_pixel_symmetric") {
      throw unsupported(id,
                        "coordinate_transformation_mode 'half_pixel_symmetric' is not supported",
                        "attribute 'coordinate_transformation_mode'");
    }
    node.attributes.erase("antialias");
    node.attributes.erase("keep_aspect_ratio_policy");
    if (!node.attributes.has("axes")) return;
    const std::vector<std::int64_t> axes = node.attributes.get_ints("axes");
    node.attributes.erase("axes");
    if (mode == "tf_crop_and_resize") {
      throw unsupported(id, "axes with tf_crop_and_resize are not supported", "attribute 'axes'");
    }
    // The roi only matters for tf_crop_and_resize.
    if (node.input(1) != kNoValue) node.inputs[1] = kNoValue;
    const ValueId x = node.inputs[0];
    const ValueId scales = node.input(2);
    const ValueId sizes = node.input(3);
    const ValueId rank = rank_of(id, x);
    const ValueId axis = normalized_axes(id, constant(id, int64s(axes)), rank);
    if (scales != kNoValue && !is_empty_constant(scales)) {
      const ValueId ones = add(id, "ConstantOfShape", {rank}, DType::kFloat32,
                               one_attribute("value", Tensor::from_vector<float>({1.0f}, {1})));
      const ValueId full = scatter_into(id, ones, axis, scales, DType::kFloat32);
      graph_.node(id).inputs[2] = full;
    }
    if (sizes != kNoValue && !is_empty_constant(sizes)) {
      const ValueId shape = add(id, "Shape", {x}, DType::kInt64);
      const ValueId full = scatter_into(id, shape, axis, sizes, DType::kInt64);
      graph_.node(id).inputs[3] = full;
    }
  }

  // GroupNormalization stays one node, which type_inference.cc types and
  // native runs in every layout: scale and bias per group (opsets 18 to 20)
  // or per channel (21), told apart by their length. Its statistics are
  // computed in float32 or wider, as stash_type's default asks.
  void group_normalization(NodeId id) {
    Node& node = graph_.node(id);
    if (!node.attributes.has("num_groups")) {
      throw Error("attribute 'num_groups' is missing", {.node = node.name});
    }
    if (node.input(1) == kNoValue || node.input(2) == kNoValue) {
      throw Error("scale and bias are required inputs", {.node = node.name});
    }
    node.attributes.erase("stash_type");
  }

  // Opset 19 added dilations, which opset 17 has only as all ones.
  void average_pool(NodeId id) {
    Node& node = graph_.node(id);
    if (!node.attributes.has("dilations")) return;
    const std::vector<std::int64_t> dilations = node.attributes.get_ints("dilations");
    if (std::any_of(dilations.begin(), dilations.end(), [](std::int64_t d) { return d != 1; })) {
      throw unsupported(id, "dilations other than 1 are not supported", "attribute 'dilations'");
    }
    node.attributes.erase("dilations");
  }

  Error unsupported(NodeId id, const std::string& what, const std::string& field) const {
    const Node& node = graph_.node(id);
    return Error(fmt::format("{} of opset {} has no opset-{} form: {}", node.op_type, source_,
                             kInferenceOpset, what),
                 {.node = node.name, .field = field});
  }

  // The data of an initializer or of a Constant node's output.
  std::optional<Tensor> constant_data(ValueId id) const {
    const Value& value = graph_.value(id);
    if (value.is_constant()) return *value.constant;
    if (value.producer == kNoNode) return std::nullopt;
    const Node& producer = graph_.node(value.producer);
    if (producer.op_type != "Constant" || !producer.domain.empty()) return std::nullopt;
    if (producer.attributes.has("value")) {
      const AttributeValue& data = producer.attributes.all().at("value");
      if (const Tensor* tensor = std::get_if<Tensor>(&data)) return *tensor;
      return std::nullopt;
    }
    if (producer.attributes.has("value_ints")) {
      return int64s(producer.attributes.get_ints("value_ints"));
    }
    return std::nullopt;
  }

  bool is_empty_constant(ValueId id) const {
    std::optional<Tensor> data = constant_data(id);
    return data && data->numel() == 0;
  }

  // [rank] of x, as a one-element int64 tensor.
  ValueId rank_of(NodeId at, ValueId x) {
    const ValueId shape = add(at, "Shape", {x}, DType::kInt64);
    return add(at, "Shape", {shape}, DType::kInt64);
  }

  // Axes in [0, rank), as int64 (opset 18 allows int32 axes).
  ValueId normalized_axes(NodeId at, ValueId axes, ValueId rank) {
    const ValueId wide = add(at, "Cast", {axes}, DType::kInt64,
                             one_attribute("to", std::int64_t{onnx::TensorProto::INT64}));
    const ValueId shifted = add(at, "Add", {wide, rank}, DType::kInt64);
    return add(at, "Mod", {shifted, rank}, DType::kInt64);
  }

  ValueId scatter_into(NodeId at, ValueId base, ValueId positions, ValueId values, DType dtype) {
    return add(at, "ScatterElements", {base, positions, values}, dtype,
               one_attribute("axis", std::int64_t{0}));
  }

  std::string unique_value_name(const std::string& base) const {
    std::string name = base;
    while (graph_.find_value(name)) name += "_";
    return name;
  }

  ValueId constant(NodeId at, Tensor tensor) {
    return graph_.add_constant(unique_value_name(graph_.node(at).name + "/opset17_constant"),
                               std::move(tensor));
  }

  // A new node computing part of the opset-17 form of node `at`.
  ValueId add(NodeId at, const std::string& op_type, std::vector<ValueId> inputs, DType dtype,
              Attributes attributes = {}) {
    std::string name = fmt::format("{}/opset17_{}", graph_.node(at).name, op_type);
    while (node_names_.count(name) != 0) name += "_";
    node_names_.insert(name);
    const ValueId output =
        graph_.add_value(unique_value_name(name + "_output"), unknown_type(dtype));
    graph_.add_node(op_type, std::move(inputs), {output}, std::move(attributes), name);
    return output;
  }

  Graph& graph_;
  const std::int64_t source_;
  std::set<std::string> node_names_;
};

// Opsets 7 and 8 read as opset 9 but for BatchNormalization's `spatial`
// (opset 9 dropped it; 0 meant statistics per element, not per channel),
// which the kernels do not serve.
void check_before_opset_9(const Graph& graph) {
  for (const Node& node : graph.nodes()) {
    if (!node.domain.empty() || node.op_type != "BatchNormalization") continue;
    if (node.attributes.get_int("spatial", 1) != 1) {
      throw Error(fmt::format("BatchNormalization of opset {} with spatial = 0 (statistics per "
                              "element) is not supported",
                              graph.opset),
                  {.node = node.name, .field = "attribute 'spatial'"});
    }
  }
}

}  // namespace

void convert_to_inference_opset(Graph& graph) {
  if (graph.opset < 9) check_before_opset_9(graph);
  if (graph.opset <= kInferenceOpset) return;
  graph.source_opset = graph.opset;
  Converter(graph).run();
  graph.opset = kInferenceOpset;
}

}  // namespace collage
