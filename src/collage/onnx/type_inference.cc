#include "collage/onnx/type_inference.h"

#include <fmt/format.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "collage/ir/control_flow.h"
#include "collage/ir/error.h"
#include "collage/ir/passes/partial_type.h"
#include "collage/onnx/attribute_checks.h"
#include "collage/onnx/exporter.h"
#include "collage/onnx/microsoft_schemas.h"
#include "collage/onnx/opset_conversion.h"
#include "collage/onnx/tensor_proto.h"

namespace collage {
namespace {

// Shape vectors and other data that shapes depend on are small; weights are
// not, and inference only needs their types.
constexpr std::int64_t kInferenceDataElements = 1024;

// Each round settles the control-flow nodes whose inputs the last one typed.
constexpr int kMaxSettleRounds = 16;

TensorType refine(const TensorType& known, DType dtype, const onnx::TypeProto_Tensor& inferred) {
  if (!inferred.has_shape()) return TensorType{dtype, known.shape};
  Shape shape;
  for (const auto& dim : inferred.shape().dim()) {
    shape.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value() : kUnknownDim);
  }
  if (has_known_rank(known) && known.shape.size() == shape.size()) {
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] < 0) shape[i] = known.shape[i];
    }
  }
  return TensorType{dtype, std::move(shape)};
}

void apply(Graph& graph, const onnx::ValueInfoProto& info) {
  std::optional<ValueId> id = graph.find_value(info.name());
  if (!id) return;
  Value& value = graph.value(*id);
  const auto& inputs = graph.inputs();
  if (value.is_constant() || std::find(inputs.begin(), inputs.end(), *id) != inputs.end()) return;
  if (!info.type().has_tensor_type()) return;
  const auto& tensor = info.type().tensor_type();
  if (tensor.elem_type() == onnx::TensorProto::UNDEFINED) return;
  std::optional<DType> dtype = dtype_from_onnx(tensor.elem_type());
  if (!dtype) {
    std::string producer = value.producer == kNoNode ? "" : graph.node(value.producer).name;
    throw Error("element type " + onnx_dtype_name(tensor.elem_type()) + " is not supported",
                {.node = producer, .field = "value " + quote_untrusted(value.name)});
  }
  value.type = refine(value.type, *dtype, tensor);
  if (is_static(value.type)) {
    std::string producer = value.producer == kNoNode ? "" : graph.node(value.producer).name;
    check_byte_size(value.type,
                    {.node = producer, .field = "value " + quote_untrusted(value.name)});
  }
}

// Ops of opsets after 17 that have no opset-17 form and stay as they are
// (opset_conversion.h): elementwise or GroupNormalization, each output of
// its input's type.
// libonnx 1.12 has no schema for them, so inference would stop at them;
// each gets one, registered as of the opset the graph is converted to.
void register_later_opset_schemas() {
  static const bool registered = [] {
    for (const char* name : {"Gelu", "Mish"}) {
      if (onnx::OpSchemaRegistry::Schema(name, kInferenceOpset, "") != nullptr) continue;
      onnx::OpSchema schema;
      schema.SetName(name)
          .SetDomain("")
          .SinceVersion(kInferenceOpset)
          .Input(0, "X", "", "T")
          .Output(0, "Y", "", "T")
          .TypeConstraint("T", {"tensor(float16)", "tensor(float)", "tensor(double)"}, "")
          .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
      if (std::string_view(name) == "Gelu") {
        schema.Attr("approximate", "", onnx::AttributeProto::STRING, std::string("none"));
      }
      onnx::OpSchemaRegistry::OpSchemaRegisterOnce registration(schema);
    }
    // GroupNormalization (opsets 18 and 21): X and its scale and bias.
    if (onnx::OpSchemaRegistry::Schema("GroupNormalization", kInferenceOpset, "") == nullptr) {
      onnx::OpSchema schema;
      schema.SetName("GroupNormalization")
          .SetDomain("")
          .SinceVersion(kInferenceOpset)
          .Input(0, "X", "", "T")
          .Input(1, "scale", "", "T")
          .Input(2, "bias", "", "T")
          .Output(0, "Y", "", "T")
          .TypeConstraint("T", {"tensor(float16)", "tensor(float)", "tensor(double)"}, "")
          .Attr("num_groups", "", onnx::AttributeProto::INT)
          .Attr("epsilon", "", onnx::AttributeProto::FLOAT, 1e-5f)
          .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
      onnx::OpSchemaRegistry::OpSchemaRegisterOnce registration(schema);
    }
    return true;
  }();
  (void)registered;
}

// OneHot's new axis is `depth` long, a value ONNX 1.12's inference does not
// read: where depth is a constant, the axis gets its length. Returns whether
// a length was set.
bool settle_one_hot_depths(Graph& graph) {
  bool settled = false;
  for (const Node& node : graph.nodes()) {
    if (!node.domain.empty() || node.op_type != "OneHot" || node.inputs.size() != 3 ||
        node.outputs.size() != 1 || node.input(1) == kNoValue) {
      continue;
    }
    const Value& depth = graph.value(node.input(1));
    Value& output = graph.value(node.outputs[0]);
    if (!depth.is_constant() || depth.constant->numel() != 1 || !has_known_rank(output.type)) {
      continue;
    }
    const auto rank = static_cast<std::int64_t>(output.type.shape.size());
    std::int64_t axis = node.attributes.get_int("axis", -1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) continue;
    auto& dim = output.type.shape[static_cast<std::size_t>(axis)];
    if (dim >= 0) continue;
    dim = static_cast<std::int64_t>(depth.constant->number_at(0));
    settled = true;
  }
  return settled;
}

// Ops whose output rank follows the length of a shape input even where the
// shape's values are known only when the model runs. ONNX 1.12's inference
// leaves their outputs without a rank then, and everything after them too.
bool takes_rank_from_shape(const Node& node) {
  return node.domain.empty() && (node.op_type == "Reshape" || node.op_type == "Expand" ||
                                 node.op_type == "ConstantOfShape");
}

// Ops whose output has their first input's rank, whatever sizes their other
// inputs choose at run time.
bool keeps_rank(const Node& node) {
  return node.domain.empty() && (node.op_type == "Slice" || node.op_type == "Tile" ||
                                 node.op_type == "Resize" || node.op_type == "Pad");
}

// Gives the outputs of takes_rank_from_shape ops that have no rank yet the
// rank their shape input says (with the one dimension a Reshape to one
// dimension must have), and those of keeps_rank ops their input's. Returns
// whether a rank was set.
bool settle_ranks(Graph& graph) {
  bool settled = false;
  for (const Node& node : graph.nodes()) {
    if (keeps_rank(node) && !node.outputs.empty() && node.input(0) != kNoValue) {
      Value& output = graph.value(node.outputs[0]);
      const TensorType& data = graph.type(node.input(0));
      if (has_known_rank(output.type) || !has_known_rank(data)) continue;
      output.type = TensorType{data.dtype, Shape(data.shape.size(), kUnknownDim)};
      settled = true;
      continue;
    }
    if (!takes_rank_from_shape(node) || node.outputs.size() != 1) continue;
    const std::size_t shape_input = node.op_type == "ConstantOfShape" ? 0 : 1;
    if (node.inputs.size() <= shape_input || node.input(shape_input) == kNoValue) continue;
    Value& output = graph.value(node.outputs[0]);
    const TensorType& shape = graph.type(node.input(shape_input));
    if (has_known_rank(output.type) || !is_static(shape) || shape.shape.size() != 1) continue;
    const std::int64_t length = shape.shape[0];
    Shape dims(static_cast<std::size_t>(length), kUnknownDim);
    DType dtype = output.type.dtype;
    if (node.op_type != "ConstantOfShape") {
      const TensorType& data = graph.type(node.input(0));
      dtype = data.dtype;
      if (node.op_type == "Expand") {
        if (!has_known_rank(data)) continue;
        dims.resize(std::max(dims.size(), data.shape.size()), kUnknownDim);
      } else if (length == 1 && is_static(data)) {
        dims[0] = shape_numel(data.shape);
      }
    }
    output.type = TensorType{dtype, std::move(dims)};
    settled = true;
  }
  return settled;
}

// `type` with dimensions that differ from `other`'s unknown.
TensorType merged(const TensorType& type, const TensorType& other) {
  if (!has_known_rank(type) || !has_known_rank(other) || type.shape.size() != other.shape.size()) {
    return unknown_type(type.dtype);
  }
  TensorType result = type;
  for (std::size_t i = 0; i < result.shape.size(); ++i) {
    if (result.shape[i] != other.shape[i]) result.shape[i] = kUnknownDim;
  }
  return result;
}

bool all_static(const std::vector<TensorType>& types) {
  return std::all_of(types.begin(), types.end(), [](const TensorType& t) { return is_static(t); });
}

// `body` typed for inputs of `input_types`: itself when it was typed for
// them already (typing is the same each time, even where it leaves a branch
// untyped), else a copy of the body as imported, inferred afresh and
// prepared.
Subgraph typed_body(const Subgraph& body, const std::vector<TensorType>& input_types,
                    const BodyPreparation& prepare) {
  bool same = body->source != nullptr && input_types.size() == body->inputs().size();
  for (std::size_t i = 0; same && i < input_types.size(); ++i) {
    same = body->type(body->inputs()[i]) == input_types[i];
  }
  if (same) return body;
  const Subgraph& source = body->source ? body->source : body;
  auto typed = std::make_shared<Graph>(*source);
  typed->source = source;
  for (std::size_t v = 0; v < typed->num_values(); ++v) {
    Value& value = typed->value(static_cast<ValueId>(v));
    if (!value.is_constant() && value.producer != kNoNode) value.type = unknown_type();
  }
  for (std::size_t i = 0; i < input_types.size(); ++i) {
    typed->value(typed->inputs()[i]).type = input_types[i];
  }
  infer_types(*typed, prepare);
  if (prepare) prepare(*typed);
  return typed;
}

std::vector<TensorType> output_types(const Graph& body) {
  std::vector<TensorType> types;
  for (ValueId id : body.outputs()) types.push_back(body.type(id));
  return types;
}

// A scalar input of a Loop body (iteration number, condition): as the
// model declares it when it does, else rank 0.
TensorType loop_scalar(const Graph& body, std::size_t input, DType dtype) {
  const TensorType& declared = body.type(body.inputs()[input]);
  if (is_static(declared) && declared.numel() == 1) return TensorType{dtype, declared.shape};
  return TensorType{dtype, Shape{}};
}

// Settles one control-flow node: its bodies typed from its inputs, its
// outputs from its bodies. Returns the outputs' types, or nothing while
// some input type is still open.
std::optional<std::vector<TensorType>> settle_node(const Graph& graph, Node& node,
                                                   const BodyPreparation& prepare) {
  const std::size_t formal = formal_inputs(node);
  std::vector<TensorType> captured;
  for (std::size_t i = formal; i < node.inputs.size(); ++i) {
    captured.push_back(graph.type(node.inputs[i]));
  }
  // An If or a Loop may read values whose shapes the data decides (a
  // detector's "no boxes left" test, a loop over the boxes found): its
  // bodies are typed from those partial types, and it then runs in a
  // runtime-shaped region (ir/runtime_shapes.h).
  const bool partial = node.op_type == "If" || node.op_type == "Loop";
  const bool known_ranks = std::all_of(captured.begin(), captured.end(), has_known_rank);
  if (!all_static(captured) && !(partial && known_ranks)) return std::nullopt;
  auto type_of = [&](std::size_t input) { return graph.type(node.inputs[input]); };

  if (node.op_type == "If") {
    const Subgraph& then_body = node.attributes.get_graph("then_branch");
    const Subgraph& else_body = node.attributes.get_graph("else_branch");
    Subgraph then_typed = typed_body(then_body, captured, prepare);
    Subgraph else_typed = typed_body(else_body, captured, prepare);
    std::vector<TensorType> then_types = output_types(*then_typed);
    std::vector<TensorType> else_types = output_types(*else_typed);
    if (then_types.size() != else_types.size() || then_types.size() != node.outputs.size()) {
      throw Error(fmt::format("its branches give {} and {} outputs where it has {}",
                              then_types.size(), else_types.size(), node.outputs.size()),
                  {.node = node.name});
    }
    node.attributes.set("then_branch", then_typed);
    node.attributes.set("else_branch", else_typed);
    // A branch that cannot be typed for these input shapes (a model with a
    // branch per input size, the other size's branch failing on this one):
    // the If takes the other branch's types, and taking this branch is an
    // error when it runs (ops_control_flow.cc).
    if (all_static(captured) && all_static(then_types) != all_static(else_types)) {
      return all_static(then_types) ? then_types : else_types;
    }
    for (std::size_t i = 0; i < then_types.size(); ++i) {
      if (then_types[i].dtype != else_types[i].dtype) {
        throw Error(
            fmt::format("its branches give output {} as {} and as {}: both branches of an "
                        "If must give the same element type",
                        i, dtype_name(then_types[i].dtype), dtype_name(else_types[i].dtype)),
            {.node = node.name});
      }
      then_types[i] = merged(then_types[i], else_types[i]);
    }
    return then_types;
  }

  const Subgraph& body = node.attributes.get_graph("body");
  std::vector<TensorType> inputs;
  if (node.op_type == "Loop") {
    if (formal < 2) throw Error("a Loop takes at least two inputs", {.node = node.name});
    if (body->inputs().size() != formal + captured.size()) {
      throw Error(fmt::format("its body takes {} inputs where the Loop gives {}",
                              body->inputs().size() - captured.size(), formal),
                  {.node = node.name});
    }
    inputs.push_back(loop_scalar(*body, 0, DType::kInt64));
    inputs.push_back(loop_scalar(*body, 1, DType::kBool));
    for (std::size_t i = 2; i < formal; ++i) inputs.push_back(type_of(i));
  } else {
    const auto scan_inputs = static_cast<std::size_t>(node.attributes.get_int("num_scan_inputs"));
    if (scan_inputs < 1 || scan_inputs > formal) {
      throw Error(
          fmt::format("num_scan_inputs is {} where the Scan has {} inputs", scan_inputs, formal),
          {.node = node.name});
    }
    const std::vector<std::int64_t> axes = node.attributes.get_ints("scan_input_axes", {});
    for (std::size_t i = 0; i < formal; ++i) {
      TensorType type = type_of(i);
      if (i >= formal - scan_inputs && is_static(type)) {
        const std::size_t j = i - (formal - scan_inputs);
        std::int64_t axis = j < axes.size() ? axes[j] : 0;
        if (axis < 0) axis += type.rank();
        if (axis < 0 || axis >= type.rank()) {
          throw Error(fmt::format("scan input {} has no axis {}", j, axis), {.node = node.name});
        }
        type.shape.erase(type.shape.begin() + axis);
      }
      inputs.push_back(type);
    }
  }
  if (partial ? !std::all_of(inputs.begin(), inputs.end(), has_known_rank) : !all_static(inputs))
    return std::nullopt;
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  if (inputs.size() != body->inputs().size()) {
    throw Error(fmt::format("its body takes {} inputs where the {} gives {}",
                            body->inputs().size() - static_cast<std::size_t>(body->captured),
                            node.op_type, formal),
                {.node = node.name});
  }
  Subgraph typed = typed_body(body, inputs, prepare);
  std::vector<TensorType> results = output_types(*typed);
  // A carried value whose shape changes between iterations (one that grows
  // by a row each time): the body is typed again with the dimensions that
  // change unknown, until its types hold for every iteration.
  for (int round = 0; node.op_type == "Loop" && round < kMaxSettleRounds; ++round) {
    bool changed = false;
    for (std::size_t i = 2; i < formal && i - 1 < results.size(); ++i) {
      const TensorType both = merged(results[i - 1], inputs[i]);
      if (!has_known_rank(both) || both == inputs[i]) continue;
      inputs[i] = both;
      changed = true;
    }
    if (!changed) break;
    typed = typed_body(body, inputs, prepare);
    results = output_types(*typed);
  }
  node.attributes.set("body", typed);

  std::vector<TensorType> outputs;
  if (node.op_type == "Loop") {
    const std::size_t carried = formal - 2;
    if (results.size() < 1 + carried || node.outputs.size() != results.size() - 1) {
      throw Error(
          fmt::format("its body gives {} outputs; a Loop with {} carried values and {} "
                      "outputs needs {}",
                      results.size(), carried, node.outputs.size(), node.outputs.size() + 1),
          {.node = node.name});
    }
    for (std::size_t i = 0; i < carried; ++i)
      outputs.push_back(merged(results[1 + i], inputs[2 + i]));
    const ValueId trip_count = node.input(0);
    const bool counted = trip_count != kNoValue && graph.value(trip_count).is_constant();
    for (std::size_t k = 1 + carried; k < results.size(); ++k) {
      TensorType scanned = results[k];
      scanned.shape.insert(scanned.shape.begin(),
                           counted ? graph.value(trip_count).constant->int_at(0) : kUnknownDim);
      outputs.push_back(scanned);
    }
    return outputs;
  }
  // Scan: states, then scan outputs as long as the scanned axis.
  const auto scan_inputs = static_cast<std::size_t>(node.attributes.get_int("num_scan_inputs"));
  const std::size_t states = formal - scan_inputs;
  if (results.size() < states || node.outputs.size() != results.size()) {
    throw Error(fmt::format("its body gives {} outputs where the Scan has {}", results.size(),
                            node.outputs.size()),
                {.node = node.name});
  }
  const TensorType first = type_of(states);
  const std::vector<std::int64_t> input_axes = node.attributes.get_ints("scan_input_axes", {});
  std::int64_t first_axis = input_axes.empty() ? 0 : input_axes[0];
  if (first_axis < 0) first_axis += first.rank();
  const std::int64_t length = first.shape[static_cast<std::size_t>(first_axis)];
  const std::vector<std::int64_t> output_axes = node.attributes.get_ints("scan_output_axes", {});
  for (std::size_t i = 0; i < states; ++i) outputs.push_back(merged(results[i], inputs[i]));
  for (std::size_t k = states; k < results.size(); ++k) {
    TensorType scanned = results[k];
    const std::size_t j = k - states;
    std::int64_t axis = j < output_axes.size() ? output_axes[j] : 0;
    if (axis < 0) axis += scanned.rank() + 1;
    if (axis < 0 || axis > scanned.rank()) {
      throw Error(fmt::format("scan output {} has no axis {}", j, axis), {.node = node.name});
    }
    scanned.shape.insert(scanned.shape.begin() + axis, length);
    outputs.push_back(scanned);
  }
  return outputs;
}

// The types of control-flow nodes' bodies and outputs, which ONNX's
// inference, run without the bodies, leaves open. Returns whether an output
// type changed.
bool settle_control_flow(Graph& graph, const BodyPreparation& prepare) {
  bool changed = false;
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    Node& node = graph.node(static_cast<NodeId>(n));
    if (!is_control_flow(node) || bodies(node).empty()) continue;
    if (node.op_type == "Scan" && graph.opset < 9) continue;
    std::optional<std::vector<TensorType>> types = settle_node(graph, node, prepare);
    if (!types) continue;
    for (std::size_t i = 0; i < node.outputs.size() && i < types->size(); ++i) {
      Value& value = graph.value(node.outputs[i]);
      if (value.type == (*types)[i]) continue;
      value.type = (*types)[i];
      changed = true;
    }
  }
  return changed;
}

// The types ONNX's inference gave (in `inferred`) to the values Shape
// nodes read, declared in `model` (the same graph before inference) where
// it declares none. False when a Shape reads a value it left without an
// element type and a shape.
bool declare_shape_inputs(const onnx::ModelProto& inferred, onnx::ModelProto& model) {
  const onnx::GraphProto& g = inferred.graph();
  std::map<std::string, const onnx::ValueInfoProto*> typed;
  std::set<std::string> declared;
  auto add = [&](const onnx::ValueInfoProto& info) {
    const onnx::TypeProto& type = info.type();
    if (type.has_tensor_type() && type.tensor_type().elem_type() != 0 &&
        type.tensor_type().has_shape()) {
      typed.emplace(info.name(), &info);
    }
  };
  for (const auto& info : g.input()) add(info);
  for (const auto& info : g.value_info()) add(info);
  for (const auto& info : g.output()) add(info);
  for (const auto& info : model.graph().input()) declared.insert(info.name());
  for (const auto& info : model.graph().value_info()) declared.insert(info.name());
  for (const auto& info : model.graph().output()) declared.insert(info.name());
  for (const auto& weight : g.initializer()) declared.insert(weight.name());
  for (const auto& node : g.node()) {
    if (node.op_type() != "Shape" || node.input_size() == 0) continue;
    const std::string& name = node.input(0);
    if (declared.count(name) != 0) continue;
    auto found = typed.find(name);
    if (found == typed.end()) return false;
    *model.mutable_graph()->add_value_info() = *found->second;
    declared.insert(name);
  }
  return true;
}

// One run of ONNX's inference over the graph, its types written back.
void infer_types_once(Graph& graph) {
  // ONNX's inference trusts these attributes (a zero stride is a SIGFPE).
  check_node_attributes(graph);
  onnx::ModelProto model = export_onnx(
      graph,
      {.max_initializer_elements = kInferenceDataElements, .value_info = false, .bodies = false});
  // Outputs settled here that ONNX's inference cannot type (OneHot's, and
  // control flow's, whose bodies it is not given) are
  // told to it, so that what follows them is typed from them. A control-flow
  // output whose size the data decides, or a Reshape's whose shape it
  // decides, is told its rank and the dimensions that are known.
  for (const Node& node : graph.nodes()) {
    const bool by_rank = is_control_flow(node) || takes_rank_from_shape(node) || keeps_rank(node);
    if (!(node.op_type == "OneHot" && node.outputs.size() == 1) && !by_rank) continue;
    for (ValueId output : node.outputs) {
      const Value& value = graph.value(output);
      const bool settled = by_rank ? has_known_rank(value.type) : is_static(value.type);
      if (!settled || graph.is_output(output)) continue;
      onnx::ValueInfoProto& info = *model.mutable_graph()->add_value_info();
      info.set_name(value.name);
      type_to_proto(value.type, *info.mutable_type());
    }
  }
  // An output whose type is not settled may not even have its element type
  // right yet (see unknown_type()); a declared type would clash with the
  // inferred one, so such outputs go without.
  for (std::size_t i = 0; i < graph.outputs().size(); ++i) {
    if (!is_static(graph.type(graph.outputs()[i]))) {
      model.mutable_graph()->mutable_output(static_cast<int>(i))->clear_type();
    }
  }
  // Node-level failures (error mode 0) leave those outputs untyped rather
  // than abort; the importer reports values that stay untyped. Data
  // propagation types more Reshapes early, but ONNX 1.12 propagates some
  // empty results wrongly (a Slice to zero elements comes out as rank 0 and
  // a Concat downstream then fails), so a failed run is retried without it:
  // folding makes those shapes known in a later round anyway.
  // libonnx 1.12's data propagation also crashes on a Shape of a value it
  // has no type for: a control-flow node whose outputs are not settled yet
  // leaves one behind, and so does a Conv after a Concat that inference
  // cannot shape (a U-Net's skip join with its height and width left
  // open). A graph is therefore inferred without it first, and again with
  // it only when every Shape then reads a value with a shape, which is
  // declared to it so that a failure upstream cannot leave it untyped.
  onnx::ModelProto plain = model;
  auto infer = [](onnx::ModelProto& proto, bool data_prop) {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false, /*strict_mode_val=*/0, data_prop);
    onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), options);
  };
  try {
    infer(plain, false);
  } catch (const std::exception& error) {
    throw Error(std::string("ONNX shape inference failed: ") + error.what());
  }
  bool untyped_outputs = false;
  for (const Node& node : graph.nodes()) {
    if (!is_control_flow(node)) continue;
    for (ValueId output : node.outputs) untyped_outputs |= !is_static(graph.type(output));
  }
  if (!untyped_outputs && declare_shape_inputs(plain, model)) {
    try {
      infer(model, true);
    } catch (const std::exception&) {
      model = std::move(plain);
    }
  } else {
    model = std::move(plain);
  }
  for (const auto& info : model.graph().value_info()) apply(graph, info);
  for (const auto& info : model.graph().output()) apply(graph, info);
}

// What ONNX's inference function of one node reads: the node's attributes,
// its inputs' types, and the data of those that are constants.
class OneNodeContext final : public onnx::InferenceContext {
 public:
  OneNodeContext(const onnx::GraphProto& graph, const onnx::NodeProto& node) {
    for (const auto& attribute : node.attribute()) attributes_[attribute.name()] = &attribute;
    for (const std::string& name : node.input()) {
      const onnx::TypeProto* type = nullptr;
      const onnx::TensorProto* data = nullptr;
      for (const auto& weight : graph.initializer()) {
        if (weight.name() != name || name.empty()) continue;
        data = &weight;
        onnx::TypeProto& typed = constant_types_.emplace_back();
        typed.mutable_tensor_type()->set_elem_type(weight.data_type());
        auto* shape = typed.mutable_tensor_type()->mutable_shape();
        for (std::int64_t dim : weight.dims()) shape->add_dim()->set_dim_value(dim);
        type = &typed;
      }
      for (const auto& input : graph.input()) {
        if (input.name() == name && !name.empty()) type = &input.type();
      }
      input_types_.push_back(type);
      input_data_.push_back(data);
    }
    output_types_.resize(static_cast<std::size_t>(node.output_size()));
  }

  const onnx::AttributeProto* getAttribute(const std::string& name) const override {
    auto it = attributes_.find(name);
    return it == attributes_.end() ? nullptr : it->second;
  }
  size_t getNumInputs() const override { return input_types_.size(); }
  const onnx::TypeProto* getInputType(size_t index) const override {
    return index < input_types_.size() ? input_types_[index] : nullptr;
  }
  const onnx::TensorProto* getInputData(size_t index) const override {
    return index < input_data_.size() ? input_data_[index] : nullptr;
  }
  size_t getNumOutputs() const override { return output_types_.size(); }
  onnx::TypeProto* getOutputType(size_t index) override { return &output_types_.at(index); }
  onnx::GraphInferencer* getGraphAttributeInferencer(const std::string&) override {
    throw onnx::InferenceError("a body is not typed on its own");
  }
  const onnx::SparseTensorProto* getInputSparseData(size_t) const override { return nullptr; }
  const onnx::TensorShapeProto* getSymbolicInput(size_t) const override { return nullptr; }

 private:
  std::map<std::string, const onnx::AttributeProto*> attributes_;
  std::deque<onnx::TypeProto> constant_types_;
  std::vector<const onnx::TypeProto*> input_types_;
  std::vector<const onnx::TensorProto*> input_data_;
  std::vector<onnx::TypeProto> output_types_;
};

// Types a graph of one node without bodies by calling its schema's inference
// function directly: what a runtime-shaped region does for each node of each
// run, where a whole-graph inference costs a hundred times more. Returns
// false, leaving the graph as it is, where that does not apply.
bool infer_one_node(Graph& graph) {
  if (graph.num_nodes() != 1 || !bodies(graph.node(0)).empty()) return false;
  const Node& node = graph.node(0);
  int version = graph.opset;
  if (!node.domain.empty()) {
    auto it = graph.other_opsets.find(node.domain);
    if (it == graph.other_opsets.end()) return false;
    version = static_cast<int>(it->second);
  }
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type, version, node.domain);
  if (schema == nullptr || !schema->has_type_and_shape_inference_function()) return false;
  check_node_attributes(graph);
  const onnx::ModelProto model = export_onnx(
      graph,
      {.max_initializer_elements = kInferenceDataElements, .value_info = false, .bodies = false});
  const onnx::NodeProto& proto = model.graph().node(0);
  OneNodeContext context(model.graph(), proto);
  try {
    schema->GetTypeAndShapeInferenceFunction()(context);
  } catch (const std::exception&) {
    return false;
  }
  for (int i = 0; i < proto.output_size(); ++i) {
    onnx::ValueInfoProto info;
    info.set_name(proto.output(i));
    *info.mutable_type() = *context.getOutputType(static_cast<std::size_t>(i));
    if (info.type().has_tensor_type()) apply(graph, info);
  }
  return true;
}

}  // namespace

void infer_types(Graph& graph, const BodyPreparation& prepare_body) {
  register_later_opset_schemas();
  register_microsoft_quantized_schemas();
  infer_types_once(graph);
  // What follows a OneHot or a control-flow node learns its shape from the
  // one settled here; control flow may be nested in what follows.
  for (int round = 0; round < kMaxSettleRounds; ++round) {
    const bool one_hot = settle_one_hot_depths(graph);
    const bool control_flow = settle_control_flow(graph, prepare_body);
    const bool ranks = settle_ranks(graph);
    if (!one_hot && !control_flow && !ranks) break;
    infer_types_once(graph);
  }
}

void infer_types_at_run_time(Graph& graph) {
  register_later_opset_schemas();
  register_microsoft_quantized_schemas();
  if (!infer_one_node(graph)) infer_types(graph);
}

}  // namespace collage
