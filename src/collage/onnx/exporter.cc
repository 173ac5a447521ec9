#include "collage/onnx/exporter.h"

#include <algorithm>
#include <type_traits>
#include <variant>

#include "collage/ir/control_flow.h"
#include "collage/ir/passes/partial_type.h"
#include "collage/onnx/proto_file.h"
#include "collage/onnx/tensor_proto.h"

namespace collage {

void type_to_proto(const TensorType& tensor_type, onnx::TypeProto& type) {
  auto* tensor = type.mutable_tensor_type();
  tensor->set_elem_type(dtype_to_onnx(tensor_type.dtype));
  if (!has_known_rank(tensor_type)) return;
  auto* shape = tensor->mutable_shape();
  for (std::int64_t dim : tensor_type.shape) {
    auto* d = shape->add_dim();
    if (dim >= 0) d->set_dim_value(dim);
  }
}

namespace {

constexpr const char* kOpaqueDomain = "collage.without_bodies";

void value_info(const Graph& graph, ValueId id, onnx::ValueInfoProto& info) {
  info.set_name(graph.value(id).name);
  type_to_proto(graph.type(id), *info.mutable_type());
}

void export_graph(const Graph& graph, const ExportOptions& options,
                  const std::vector<std::string>& outer_names, onnx::GraphProto& proto);

// `outer_names`: for a body, the enclosing graph's names of its captured inputs.
void attribute_to_proto(const std::string& name, const AttributeValue& value,
                        const ExportOptions& options, const std::vector<std::string>& outer_names,
                        onnx::AttributeProto& proto) {
  proto.set_name(name);
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          proto.set_type(onnx::AttributeProto::INT);
          proto.set_i(v);
        } else if constexpr (std::is_same_v<T, float>) {
          proto.set_type(onnx::AttributeProto::FLOAT);
          proto.set_f(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          proto.set_type(onnx::AttributeProto::STRING);
          proto.set_s(v);
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
          proto.set_type(onnx::AttributeProto::INTS);
          for (std::int64_t x : v) proto.add_ints(x);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          proto.set_type(onnx::AttributeProto::FLOATS);
          for (float x : v) proto.add_floats(x);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          proto.set_type(onnx::AttributeProto::STRINGS);
          for (const std::string& x : v) proto.add_strings(x);
        } else if constexpr (std::is_same_v<T, Subgraph>) {
          proto.set_type(onnx::AttributeProto::GRAPH);
          export_graph(*v, options, outer_names, *proto.mutable_g());
        } else {
          proto.set_type(onnx::AttributeProto::TENSOR);
          *proto.mutable_t() = tensor_to_proto(v, name);
        }
      },
      value);
}

// Fills `proto` with `graph`. A body (outer_names not empty) lists only its
// formal inputs; it reads its captured values by their names in the
// enclosing graph, as ONNX has it, through an Identity where its own name
// differs (a pass may have renamed the outer value).
void export_graph(const Graph& graph, const ExportOptions& options,
                  const std::vector<std::string>& outer_names, onnx::GraphProto& proto) {
  proto.set_name(graph.name.empty() ? "graph" : graph.name);
  // A body exported on its own (outer_names empty) lists every input.
  const std::size_t formal =
      graph.inputs().size() - (outer_names.empty() ? 0 : static_cast<std::size_t>(graph.captured));
  for (std::size_t i = 0; i < formal; ++i) value_info(graph, graph.inputs()[i], *proto.add_input());
  for (std::size_t i = formal; i < graph.inputs().size() && i - formal < outer_names.size(); ++i) {
    const std::string& inner = graph.value(graph.inputs()[i]).name;
    const std::string& outer = outer_names[i - formal];
    if (inner == outer) continue;
    auto* identity = proto.add_node();
    identity->set_op_type("Identity");
    identity->add_input(outer);
    identity->add_output(inner);
  }
  for (std::size_t v = 0; v < graph.num_values(); ++v) {
    const auto id = static_cast<ValueId>(v);
    const Value& value = graph.value(id);
    if (!value.is_constant()) continue;
    if (value.constant->numel() > options.max_initializer_elements) {
      value_info(graph, id, *proto.add_input());
      continue;
    }
    if (options.external_file) {
      if (std::optional<std::string> file = options.external_file(*value.constant)) {
        onnx::TensorProto& weight = *proto.add_initializer();
        weight.set_name(value.name);
        weight.set_data_type(dtype_to_onnx(value.constant->dtype()));
        for (std::int64_t dim : value.constant->shape()) weight.add_dims(dim);
        weight.set_data_location(onnx::TensorProto::EXTERNAL);
        auto* location = weight.add_external_data();
        location->set_key("location");
        location->set_value(*file);
        auto* length = weight.add_external_data();
        length->set_key("length");
        length->set_value(std::to_string(value.constant->byte_size()));
        continue;
      }
    }
    *proto.add_initializer() = tensor_to_proto(*value.constant, value.name);
  }

  for (const Node& node : graph.nodes()) {
    auto* out = proto.add_node();
    out->set_name(node.name);
    out->set_op_type(node.op_type);
    if (!node.domain.empty()) out->set_domain(node.domain);
    // Without its bodies, a control-flow node is an op ONNX's inference
    // must not read (libonnx 1.12 crashes on an If without branches, or a
    // Scan whose body is missing): one of a domain it has no schema for,
    // which it leaves untyped.
    if (!options.bodies && (is_control_flow(node) || !bodies(node).empty()))
      out->set_domain(kOpaqueDomain);
    const std::size_t node_formal = formal_inputs(node);
    std::vector<std::string> captured;
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      const std::string name =
          node.inputs[i] == kNoValue ? std::string() : graph.value(node.inputs[i]).name;
      if (i < node_formal) {
        out->add_input(name);
      } else {
        captured.push_back(name);
      }
    }
    for (ValueId output : node.outputs) out->add_output(graph.value(output).name);
    for (const auto& [name, value] : node.attributes.all()) {
      if (std::holds_alternative<Subgraph>(value) && !options.bodies) continue;
      attribute_to_proto(name, value, options, captured, *out->add_attribute());
    }
  }

  for (ValueId output : graph.outputs()) value_info(graph, output, *proto.add_output());
  if (!options.value_info) return;
  for (const Node& node : graph.nodes()) {
    for (ValueId output : node.outputs) {
      if (!graph.is_output(output)) value_info(graph, output, *proto.add_value_info());
    }
  }
}

}  // namespace

onnx::ModelProto export_onnx(const Graph& graph, const ExportOptions& options) {
  onnx::ModelProto model;
  model.set_ir_version(onnx::IR_VERSION);
  model.set_producer_name("collage");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(graph.opset);
  for (const auto& [domain, version] : graph.other_opsets) {
    auto* other = model.add_opset_import();
    other->set_domain(domain);
    other->set_version(version);
  }
  if (!options.bodies) {
    auto* opaque = model.add_opset_import();
    opaque->set_domain(kOpaqueDomain);
    opaque->set_version(1);
  }
  export_graph(graph, options, {}, *model.mutable_graph());
  return model;
}

void save_onnx(const Graph& graph, const std::string& path) {
  write_proto_file(path, export_onnx(graph));
}

}  // namespace collage
