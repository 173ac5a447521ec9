#include "collage/onnx/type_inference.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <exception>
#include <string>
#include <string_view>

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
// (opset_conversion.h): elementwise, each output of its input's type.
// libonnx 1.12 has no schema for them, so inference would stop at them;
// each gets one, registered as of the opset the graph is converted to.
void register_elementwise_schemas() {
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

// One run of ONNX's inference over the graph, its types written back.
void infer_types_once(Graph& graph) {
  // ONNX's inference trusts these attributes (a zero stride is a SIGFPE).
  check_node_attributes(graph);
  onnx::ModelProto model =
      export_onnx(graph, {.max_initializer_elements = kInferenceDataElements, .value_info = false});
  // Outputs settled here that ONNX's inference cannot type (OneHot's) are
  // told to it, so that what follows them is typed from them.
  for (const Node& node : graph.nodes()) {
    if (node.op_type != "OneHot" || node.outputs.size() != 1) continue;
    const Value& value = graph.value(node.outputs[0]);
    if (!is_static(value.type)) continue;
    onnx::ValueInfoProto& info = *model.mutable_graph()->add_value_info();
    info.set_name(value.name);
    type_to_proto(value.type, *info.mutable_type());
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
  onnx::ModelProto fallback = model;
  try {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false, /*strict_mode_val=*/0,
                                        /*data_prop_val=*/true);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception&) {
    model = std::move(fallback);
    try {
      onnx::ShapeInferenceOptions options(false, 0, /*data_prop_val=*/false);
      onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception& error) {
      throw Error(std::string("ONNX shape inference failed: ") + error.what());
    }
  }
  for (const auto& info : model.graph().value_info()) apply(graph, info);
  for (const auto& info : model.graph().output()) apply(graph, info);
}

}  // namespace

void infer_types(Graph& graph) {
  register_elementwise_schemas();
  register_microsoft_quantized_schemas();
  infer_types_once(graph);
  // What follows a OneHot learns its shape from the one settled here.
  if (settle_one_hot_depths(graph)) infer_types_once(graph);
}

}  // namespace collage
