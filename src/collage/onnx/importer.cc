#include "collage/onnx/importer.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collage/ir/control_flow.h"
#include "collage/ir/error.h"
#include "collage/ir/passes/canonicalize.h"
#include "collage/ir/passes/float16.h"
#include "collage/ir/passes/partial_type.h"
#include "collage/ir/runtime_shapes.h"
#include "collage/onnx/constant_branches.h"
#include "collage/onnx/old_opset.h"
#include "collage/onnx/opset_conversion.h"
#include "collage/onnx/proto_file.h"
#include "collage/onnx/quantization_checks.h"
#include "collage/onnx/tensor_proto.h"
#include "collage/onnx/type_inference.h"

namespace collage {
namespace {

std::string input_shape_hint(const std::string& input) {
  return "--input-shape " + input + "=D0,D1,...";
}

std::string normalized_domain(const std::string& domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

std::string qualified_op(const Node& node) {
  return node.domain.empty() ? node.op_type : node.domain + "." + node.op_type;
}

// A partial type from a model's declaration, or nullopt when it is not a
// tensor of a supported element type.
std::optional<TensorType> declared_type(const onnx::TypeProto& type) {
  if (!type.has_tensor_type()) return std::nullopt;
  std::optional<DType> dtype = dtype_from_onnx(type.tensor_type().elem_type());
  if (!dtype) return std::nullopt;
  if (!type.tensor_type().has_shape()) return unknown_type(*dtype);
  Shape shape;
  for (const auto& dim : type.tensor_type().shape().dim()) {
    shape.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value() : kUnknownDim);
  }
  return TensorType{*dtype, std::move(shape)};
}

// The attribute's kind; old exporters leave `type` unset and fill one field.
onnx::AttributeProto::AttributeType attribute_kind(const onnx::AttributeProto& a) {
  if (a.type() != onnx::AttributeProto::UNDEFINED) return a.type();
  if (a.has_f()) return onnx::AttributeProto::FLOAT;
  if (a.has_i()) return onnx::AttributeProto::INT;
  if (a.has_s()) return onnx::AttributeProto::STRING;
  if (a.has_t()) return onnx::AttributeProto::TENSOR;
  if (a.has_g()) return onnx::AttributeProto::GRAPH;
  if (a.floats_size() > 0) return onnx::AttributeProto::FLOATS;
  if (a.strings_size() > 0) return onnx::AttributeProto::STRINGS;
  if (a.graphs_size() > 0) return onnx::AttributeProto::GRAPHS;
  return onnx::AttributeProto::INTS;
}

bool is_control_flow_proto(const onnx::NodeProto& node) {
  if (!(node.domain().empty() || node.domain() == "ai.onnx")) return false;
  return node.op_type() == "If" || node.op_type() == "Loop" || node.op_type() == "Scan";
}

// The names `graph` reads from enclosing graphs: read by its nodes (or by
// their bodies, nested) and defined by none of its inputs, weights and
// nodes. In order of first use.
std::vector<std::string> free_names(const onnx::GraphProto& graph) {
  std::set<std::string> defined;
  for (const auto& input : graph.input()) defined.insert(input.name());
  for (const auto& weight : graph.initializer()) defined.insert(weight.name());
  for (const auto& node : graph.node()) {
    for (const std::string& output : node.output()) defined.insert(output);
  }
  std::vector<std::string> found;
  std::set<std::string> seen;
  auto read = [&](const std::string& name) {
    if (name.empty() || defined.count(name) != 0 || !seen.insert(name).second) return;
    found.push_back(name);
  };
  for (const auto& node : graph.node()) {
    for (const std::string& input : node.input()) read(input);
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) {
        for (const std::string& name : free_names(attribute.g())) read(name);
      }
    }
  }
  for (const auto& output : graph.output()) read(output.name());
  return found;
}

// What a control-flow node's bodies read from outside, all of them in one
// list (If's two branches capture the same values).
std::vector<std::string> captured_names(const onnx::NodeProto& node) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const auto& attribute : node.attribute()) {
    if (!attribute.has_g()) continue;
    for (const std::string& name : free_names(attribute.g())) {
      if (seen.insert(name).second) names.push_back(name);
    }
  }
  return names;
}

class Importer {
 public:
  Importer(std::shared_ptr<const onnx::ModelProto> model, const ImportOptions& options,
           std::string model_dir)
      : model_(std::move(model)),
        proto_(model_->graph()),
        options_(options),
        model_dir_(std::move(model_dir)) {}

  // The importer of a body of a control-flow node of `parent`'s graph:
  // `proto`, which reads `captured` from the enclosing graph.
  Importer(const Importer& parent, const onnx::GraphProto& proto, std::vector<std::string> captured)
      : model_(parent.model_),
        proto_(proto),
        options_(parent.options_),
        model_dir_(parent.model_dir_),
        captured_(std::move(captured)),
        depth_(parent.depth_ + 1) {
    graph_.opset = parent.graph_.opset;
    graph_.other_opsets = parent.graph_.other_opsets;
    if (depth_ > kMaxBodyDepth) {
      throw Error(fmt::format("control flow nests more than {} deep", kMaxBodyDepth));
    }
  }

  Graph run() {
    check_model();
    read_opsets();
    check_input_shape_names();
    read_initializers();
    read_inputs();
    read_nodes();
    read_outputs();
    read_declared_types();
    convert_to_inference_opset(graph_);
    graph_.sort_topologically();
    graph_.prune();
    // Canonicalization, and the preparation of control-flow bodies that
    // typing them includes (type_inference.h), share these options.
    CanonicalizeOptions canonical;
    canonical.evaluator = options_.evaluator;
    canonical.graph_opt = options_.graph_opt;
    BodyPreparation prepare;
    if (options_.canonicalize)
      prepare = [&canonical](Graph& body) { canonicalize(body, canonical); };
    canonical.infer_types = [&prepare](Graph& graph) { infer_types(graph, prepare); };
    canonical.infer_types(graph_);
    if (options_.float16_in_float32 && compute_float16_in_float32(graph_) > 0) {
      // Types the model declares for values now computed in float32.
      for (auto& [name, type] : declared_) {
        std::optional<ValueId> id = graph_.find_value(name);
        if (type.dtype == DType::kFloat16 && id && graph_.type(*id).dtype == DType::kFloat32)
          type.dtype = DType::kFloat32;
      }
      canonical.infer_types(graph_);
    }
    check_quantization_parameters(graph_);
    if (options_.canonicalize) {
      CanonicalizeStats stats = canonicalize(graph_, canonical);
      if (options_.canonicalize_stats != nullptr) *options_.canonicalize_stats = std::move(stats);
    }
    check_supported();
    apply_declared_types();
    enclose_runtime_shapes(graph_);
    check_static_types();
    check_loops_end(graph_);
    return std::move(graph_);
  }

  // A body: typed later, from its node's inputs (onnx/type_inference.h).
  Graph run_body() {
    read_initializers();
    read_body_inputs();
    read_nodes();
    read_outputs();
    convert_to_inference_opset(graph_);
    graph_.sort_topologically();
    graph_.prune();
    return std::move(graph_);
  }

 private:
  void check_model() const {
    if (model_->ir_version() <= 0) throw Error("not an ONNX model: it has no IR version");
    if (!model_->has_graph()) throw Error("not an ONNX model: it has no graph");
  }

  void read_opsets() {
    bool has_default = false;
    for (const auto& opset : model_->opset_import()) {
      std::string domain = normalized_domain(opset.domain());
      if (!domain.empty()) {
        graph_.other_opsets[domain] = opset.version();
        continue;
      }
      if (opset.version() < kMinOpset || opset.version() > kMaxOpset) {
        throw Error(fmt::format("opset {} of the default ONNX domain is not supported "
                                "(supported: {} to {})",
                                opset.version(), kMinOpset, kMaxOpset),
                    {.field = "opset_import"});
      }
      graph_.opset = opset.version();
      has_default = true;
    }
    if (!has_default) {
      throw Error("the model imports no opset of the default ONNX domain",
                  {.field = "opset_import"});
    }
  }

  ValueId checked_new_value(const std::string& name, const std::string& what) {
    if (name.empty()) throw Error(what + " without a name");
    if (graph_.find_value(name))
      throw Error("value " + quote_untrusted(name) + " is defined more than once");
    return graph_.add_value(name, unknown_type());
  }

  void read_initializers() {
    for (const auto& initializer : proto_.initializer()) {
      if (initializer.name().empty()) throw Error("initializer without a name");
      if (graph_.find_value(initializer.name())) {
        throw Error("initializer " + quote_untrusted(initializer.name()) +
                    " is defined more than once");
      }
      graph_.add_constant(initializer.name(), tensor_from_proto(initializer, model_dir_, model_));
    }
    if (proto_.sparse_initializer_size() > 0) {
      throw Error("sparse initializers are not supported",
                  {.field = "initializer " +
                            quote_untrusted(proto_.sparse_initializer(0).values().name())});
    }
  }

  // A body's formal inputs, with the types the model declares as far as it
  // does, then its captured values.
  void read_body_inputs() {
    for (const auto& input : proto_.input()) {
      std::optional<ValueId> existing = graph_.find_value(input.name());
      if (existing && graph_.value(*existing).is_constant()) continue;
      if (existing)
        throw Error("input " + quote_untrusted(input.name()) + " is listed more than once");
      if (input.name().empty()) throw Error("body input without a name");
      graph_.add_input(input.name(), declared_type(input.type()).value_or(unknown_type()));
    }
    for (const std::string& name : captured_) {
      if (graph_.find_value(name)) continue;
      graph_.add_input(name, unknown_type());
    }
    graph_.captured = static_cast<int>(captured_.size());
  }

  // Names in --input-shape must be inputs; checked first, since a misspelt
  // name would otherwise surface as the dynamic dimension it failed to fix.
  void check_input_shape_names() const {
    const std::vector<std::string> names = input_names();
    for (const auto& [name, shape] : options_.input_shapes) {
      if (std::find(names.begin(), names.end(), name) != names.end()) continue;
      throw Error(fmt::format("'{}' is not an input of the model (inputs: {})", name,
                              fmt::join(names, ", ")),
                  {.field = "--input-shape"});
    }
  }

  // The graph inputs that are not initializers, in the model's order.
  std::vector<std::string> input_names() const {
    std::set<std::string> initializers;
    for (const auto& initializer : proto_.initializer()) initializers.insert(initializer.name());
    std::vector<std::string> names;
    for (const auto& input : proto_.input()) {
      if (initializers.count(input.name()) == 0) names.push_back(input.name());
    }
    return names;
  }

  void read_inputs() {
    const bool only_input = !options_.data_shapes.empty() && input_names().size() == 1;
    for (const auto& input : proto_.input()) {
      std::optional<ValueId> existing = graph_.find_value(input.name());
      // Since IR version 4 an initializer may also be listed as an input, to
      // allow overriding it; we treat it as the constant it is.
      if (existing && graph_.value(*existing).is_constant()) continue;
      if (existing)
        throw Error("input " + quote_untrusted(input.name()) + " is listed more than once");
      graph_.add_input(input.name(), input_type(input, only_input));
    }
  }

  // The shape of the data given for `input` (ImportOptions::data_shapes),
  // where it should fix the input's dynamic dimensions: the model leaves
  // at least one open (or gives no shape) and the data agrees with every
  // one it fixes.
  std::optional<Shape> data_shape(const onnx::ValueInfoProto& input, bool only_input) const {
    auto found = options_.data_shapes.find(input.name());
    if (found == options_.data_shapes.end() && only_input) found = options_.data_shapes.find("");
    if (found == options_.data_shapes.end()) return std::nullopt;
    const Shape& shape = found->second;
    const auto& tensor = input.type().tensor_type();
    if (!tensor.has_shape()) return shape;
    if (tensor.shape().dim_size() != static_cast<int>(shape.size())) return std::nullopt;
    bool open = false;
    for (int i = 0; i < tensor.shape().dim_size(); ++i) {
      const auto& dim = tensor.shape().dim(i);
      if (!dim.has_dim_value() || dim.dim_value() < 0) {
        open = true;
      } else if (dim.dim_value() != shape[static_cast<std::size_t>(i)]) {
        return std::nullopt;
      }
    }
    if (!open) return std::nullopt;
    return shape;
  }

  // Adds the dimensions `input` leaves open to graph_.dynamic_dims; all of
  // them when the model gives no shape, which the sizes given then decide.
  void record_dynamic_dims(const onnx::ValueInfoProto& input, bool only_input) {
    const auto& tensor = input.type().tensor_type();
    if (!tensor.has_shape()) {
      auto given = options_.input_shapes.find(input.name());
      std::optional<Shape> data = data_shape(input, only_input);
      const std::size_t rank = given != options_.input_shapes.end() ? given->second.size()
                               : data                               ? data->size()
                                                                    : 0;
      for (std::size_t i = 0; i < rank; ++i)
        graph_.dynamic_dims.push_back(OpenDim{input.name(), static_cast<int>(i), ""});
      return;
    }
    for (int i = 0; i < tensor.shape().dim_size(); ++i) {
      const auto& dim = tensor.shape().dim(i);
      if (dim.has_dim_value() && dim.dim_value() >= 0) continue;
      graph_.dynamic_dims.push_back(
          OpenDim{input.name(), i, dim.has_dim_param() ? dim.dim_param() : std::string()});
    }
  }

  // The input's type; open dimensions become kOpenDimSize and are recorded
  // in graph_.open_dims.
  TensorType input_type(const onnx::ValueInfoProto& input, bool only_input) {
    const std::string field = "input " + quote_untrusted(input.name());
    if (input.name().empty()) throw Error("graph input without a name");
    if (!input.type().has_tensor_type())
      throw Error("only tensor inputs are supported", {.field = field});
    const auto& tensor = input.type().tensor_type();
    std::optional<DType> dtype = dtype_from_onnx(tensor.elem_type());
    if (!dtype) {
      throw Error("element type " + onnx_dtype_name(tensor.elem_type()) + " is not supported",
                  {.field = field});
    }
    record_dynamic_dims(input, only_input);
    auto given = options_.input_shapes.find(input.name());
    if (given != options_.input_shapes.end()) {
      const Shape& shape = given->second;
      if (tensor.has_shape() && tensor.shape().dim_size() != static_cast<int>(shape.size())) {
        throw Error(fmt::format("--input-shape gives rank {} ({}), the model declares rank {}",
                                shape.size(), shape_to_string(shape), tensor.shape().dim_size()),
                    {.field = field});
      }
      for (std::int64_t dim : shape) {
        if (dim < 0) {
          throw Error("--input-shape has a negative dimension " + shape_to_string(shape),
                      {.field = field});
        }
      }
      TensorType type{*dtype, shape};
      check_byte_size(type, {.field = field});
      return type;
    }
    if (std::optional<Shape> shape = data_shape(input, only_input)) {
      TensorType type{*dtype, *shape};
      check_byte_size(type, {.field = field});
      return type;
    }
    if (!tensor.has_shape()) {
      throw Error("the model gives no shape; fix it with " + input_shape_hint(input.name()),
                  {.field = field});
    }
    Shape shape;
    for (int i = 0; i < tensor.shape().dim_size(); ++i) {
      const auto& dim = tensor.shape().dim(i);
      if (dim.has_dim_value() && dim.dim_value() >= 0) {
        shape.push_back(dim.dim_value());
        continue;
      }
      graph_.open_dims.push_back(
          OpenDim{input.name(), i, dim.has_dim_param() ? dim.dim_param() : std::string()});
      shape.push_back(kOpenDimSize);
    }
    TensorType type{*dtype, std::move(shape)};
    check_byte_size(type, {.field = field});
    return type;
  }

  std::string unique_node_name(const onnx::NodeProto& node, int index) {
    std::string name = node.name();
    if (name.empty() || used_node_names_.count(name) != 0) {
      name = fmt::format("{}_{}", node.name().empty() ? node.op_type() : node.name(), index);
      while (used_node_names_.count(name) != 0) name += "_";
    }
    used_node_names_.insert(name);
    return name;
  }

  // Outputs of a node, created before any node is added so that nodes may
  // come in any order. Trailing omitted outputs are dropped; omitted outputs
  // in the middle get a private name.
  std::vector<ValueId> declare_outputs(const onnx::NodeProto& node, const std::string& name) {
    int count = node.output_size();
    while (count > 0 && node.output(count - 1).empty()) --count;
    std::vector<ValueId> outputs;
    for (int i = 0; i < count; ++i) {
      std::string value = node.output(i);
      if (value.empty()) {
        value = fmt::format("{}:unused{}", name, i);
        while (graph_.find_value(value)) value += "_";
      }
      try {
        outputs.push_back(checked_new_value(value, "node output"));
      } catch (const Error& error) {
        throw Error(error.message(), {.node = name});
      }
    }
    return outputs;
  }

  // `captured`: for a control-flow node, what its bodies read from outside.
  std::optional<AttributeValue> read_attribute(const onnx::AttributeProto& a,
                                               const std::string& node_name,
                                               const std::vector<std::string>* captured) {
    const std::string field = "attribute " + quote_untrusted(a.name());
    switch (attribute_kind(a)) {
      case onnx::AttributeProto::FLOAT:
        return a.f();
      case onnx::AttributeProto::INT:
        return a.i();
      case onnx::AttributeProto::STRING:
        return a.s();
      case onnx::AttributeProto::FLOATS:
        return std::vector<float>(a.floats().begin(), a.floats().end());
      case onnx::AttributeProto::INTS:
        return std::vector<std::int64_t>(a.ints().begin(), a.ints().end());
      case onnx::AttributeProto::STRINGS:
        return std::vector<std::string>(a.strings().begin(), a.strings().end());
      case onnx::AttributeProto::TENSOR:
        try {
          return tensor_from_proto(a.t(), model_dir_, model_);
        } catch (const Error& error) {
          throw Error(error.message(), {.node = node_name, .field = field});
        }
      case onnx::AttributeProto::GRAPH:
        if (captured != nullptr) {
          try {
            return std::make_shared<const Graph>(Importer(*this, a.g(), *captured).run_body());
          } catch (const Error& error) {
            if (!error.where().node.empty()) throw;
            throw Error(error.message(), {.node = node_name, .field = field});
          }
        }
        [[fallthrough]];
      case onnx::AttributeProto::GRAPHS:
        // Other ops with graphs (SequenceMap, ...): reported as unsupported
        // after canonicalization.
        subgraph_nodes_.insert(node_name);
        return std::nullopt;
      default:
        throw Error(fmt::format("attribute kind {} is not supported",
                                onnx::AttributeProto::AttributeType_Name(attribute_kind(a))),
                    {.node = node_name, .field = field});
    }
  }

  void read_nodes() {
    std::vector<std::string> names;
    std::vector<std::vector<ValueId>> outputs;
    for (int i = 0; i < proto_.node_size(); ++i) {
      names.push_back(unique_node_name(proto_.node(i), i));
      outputs.push_back(declare_outputs(proto_.node(i), names.back()));
    }
    for (int i = 0; i < proto_.node_size(); ++i) {
      const onnx::NodeProto& node = proto_.node(i);
      const std::string& name = names[static_cast<std::size_t>(i)];
      std::vector<ValueId> inputs;
      for (int k = 0; k < node.input_size(); ++k) {
        if (node.input(k).empty()) {
          inputs.push_back(kNoValue);
          continue;
        }
        std::optional<ValueId> id = graph_.find_value(node.input(k));
        if (!id) {
          throw Error("reads " + quote_untrusted(node.input(k)) + ", which nothing defines",
                      {.node = name, .field = fmt::format("input {}", k)});
        }
        inputs.push_back(*id);
      }
      std::optional<std::vector<std::string>> captured;
      if (is_control_flow_proto(node)) captured = captured_names(node);
      Attributes attributes;
      for (const auto& attribute : node.attribute()) {
        if (!attribute.ref_attr_name().empty()) continue;
        if (auto value = read_attribute(attribute, name, captured ? &*captured : nullptr))
          attributes.set(attribute.name(), *value);
      }
      for (const std::string& outer : captured.value_or(std::vector<std::string>())) {
        std::optional<ValueId> id = graph_.find_value(outer);
        if (!id) {
          throw Error("its body reads " + quote_untrusted(outer) + ", which nothing defines",
                      {.node = name});
        }
        inputs.push_back(*id);
      }
      NodeId id = graph_.add_node(node.op_type(), std::move(inputs),
                                  std::move(outputs[static_cast<std::size_t>(i)]),
                                  std::move(attributes), name);
      graph_.node(id).domain = normalized_domain(node.domain());
    }
  }

  void read_outputs() {
    if (proto_.output_size() == 0) throw Error("the graph has no outputs");
    for (const auto& output : proto_.output()) {
      std::optional<ValueId> id = graph_.find_value(output.name());
      if (!id) {
        throw Error("nothing defines it",
                    {.field = "graph output " + quote_untrusted(output.name())});
      }
      graph_.add_output(*id);
    }
  }

  // Types the model itself declares for intermediate values and outputs:
  // the last resort for values shape inference cannot type (custom ops).
  void read_declared_types() {
    for (const auto& info : proto_.value_info()) {
      if (auto type = declared_type(info.type())) declared_[info.name()] = *type;
    }
    for (const auto& info : proto_.output()) {
      if (auto type = declared_type(info.type())) declared_[info.name()] = *type;
    }
  }

  void apply_declared_types() {
    for (std::size_t v = 0; v < graph_.num_values(); ++v) {
      Value& value = graph_.value(static_cast<ValueId>(v));
      if (is_static(value.type)) continue;
      auto declared = declared_.find(value.name);
      if (declared == declared_.end() || !is_static(declared->second)) continue;
      check_byte_size(declared->second, {.field = "value " + quote_untrusted(value.name)});
      value.type = declared->second;
    }
  }

  void check_supported() const {
    std::map<std::string, int> rejected;
    for (const Node& node : graph_.nodes()) {
      bool supported = subgraph_nodes_.count(node.name) == 0 &&
                       (!options_.is_supported || options_.is_supported(node));
      if (!supported) ++rejected[qualified_op(node)];
    }
    if (rejected.empty()) return;
    std::vector<std::string> parts;
    for (const auto& [op, count] : rejected) parts.push_back(fmt::format("{} ({})", op, count));
    throw Error(fmt::format("unsupported operators: {}", fmt::join(parts, ", ")));
  }

  void check_static_types() const { check_static_types(graph_); }

  // A Loop without a trip count whose condition can never turn false would
  // run forever: refused here rather than found when the model runs.
  static void check_loops_end(const Graph& graph) {
    for (const Node& node : graph.nodes()) {
      for (const Graph* body : bodies(node)) check_loops_end(*body);
      if (!is_control_flow(node) || node.op_type != "Loop" || node.input(0) != kNoValue) continue;
      if (node.input(1) != kNoValue && !is_true_constant(graph, node.input(1))) continue;
      if (bodies(node).empty() || bodies(node).front()->outputs().empty()) continue;
      const Graph& body = *bodies(node).front();
      ValueId condition = body.outputs().front();
      // Through Identity nodes to what defines the condition.
      while (body.value(condition).producer != kNoNode) {
        const Node& producer = body.node(body.value(condition).producer);
        if (producer.op_type != "Identity" || producer.inputs.empty()) break;
        condition = producer.inputs[0];
      }
      const bool passed_on = body.inputs().size() > 1 && condition == body.inputs()[1];
      if (passed_on || is_true_constant(body, condition)) {
        throw Error("the loop never ends: it has no trip count and its condition stays true",
                    {.node = node.name});
      }
    }
  }

  // Whether `id` is a constant true, as a weight or a Constant node's output.
  static bool is_true_constant(const Graph& graph, ValueId id) {
    const Value& value = graph.value(id);
    const Tensor* tensor = value.is_constant() ? &*value.constant : nullptr;
    if (tensor == nullptr && value.producer != kNoNode) {
      const Node& producer = graph.node(value.producer);
      if (producer.op_type == "Constant" && producer.attributes.has("value")) {
        tensor = &producer.attributes.get_tensor("value");
      }
    }
    return tensor != nullptr && tensor->numel() == 1 && tensor->dtype() == DType::kBool &&
           tensor->int_at(0) != 0;
  }

  // Every value of `graph` and of its bodies has a static type.
  static void check_static_types(const Graph& graph) {
    // A value of unknown rank is reported first: it is what kept the shapes
    // the data decides from being enclosed (enclose_runtime_shapes).
    std::vector<const Value*> open;
    std::vector<const Value*> known_rank;
    for (const Value& value : graph.values()) {
      if (is_static(value.type) || value.type.at_run_time) continue;
      (has_known_rank(value.type) ? known_rank : open).push_back(&value);
    }
    open.insert(open.end(), known_rank.begin(), known_rank.end());
    for (const Value* unsettled : open) {
      const Value& value = *unsettled;
      if (value.producer == kNoNode) {
        throw Error("its shape is unknown", {.field = "value " + quote_untrusted(value.name)});
      }
      const Node& producer = graph.node(value.producer);
      if (is_control_flow(producer)) {
        throw Error(fmt::format("its shape is known only when the model runs ({}): {}",
                                partial_type_to_string(value.type),
                                producer.op_type == "Loop"
                                    ? "the loop's trip count is not a constant, or a loop-carried "
                                      "value changes shape"
                                    : "the body's shapes depend on the data"),
                    {.node = producer.name, .field = "value " + quote_untrusted(value.name)});
      }
      throw Error(fmt::format("its shape is still unknown after shape inference ({}); ONNX shape "
                              "inference cannot tell the output shape of {} for these inputs",
                              partial_type_to_string(value.type), qualified_op(producer)),
                  {.node = producer.name, .field = "value " + quote_untrusted(value.name)});
    }
    for (const Node& node : graph.nodes()) {
      // A runtime-shaped region's body is typed as each run goes.
      if (is_runtime_shaped_region(node)) continue;
      for (const Graph* body : bodies(node)) {
        // An If's branch that could not be typed for these shapes, beside
        // one that could (which typed the If): refused only if taken.
        const bool untyped_branch =
            node.op_type == "If" &&
            std::any_of(body->outputs().begin(), body->outputs().end(),
                        [&](ValueId id) { return !is_static(body->type(id)); });
        if (!untyped_branch) check_static_types(*body);
      }
    }
  }

  // Nesting deeper than this is no model people ship, and recursion must end.
  static constexpr int kMaxBodyDepth = 16;

  std::shared_ptr<const onnx::ModelProto> model_;
  const onnx::GraphProto& proto_;
  const ImportOptions& options_;
  std::string model_dir_;
  Graph graph_;
  std::set<std::string> used_node_names_;
  std::set<std::string> subgraph_nodes_;
  std::map<std::string, TensorType> declared_;
  // For a body: the enclosing graph's values it reads, and how deep it nests.
  std::vector<std::string> captured_;
  int depth_ = 0;
};

}  // namespace

Graph import_onnx_model(std::shared_ptr<const onnx::ModelProto> model, const ImportOptions& options,
                        const std::string& model_dir) {
  // A runtime-shaped region types its nodes as it runs, as import does.
  set_runtime_typing(infer_types_at_run_time);
  Graph graph =
      Importer(with_constant_branches_inlined(in_readable_opset(std::move(model)), model_dir),
               options, model_dir)
          .run();
  return graph;
}

std::shared_ptr<onnx::ModelProto> parse_onnx_model(const std::string& bytes) {
  auto model = std::make_shared<onnx::ModelProto>();
  if (bytes.empty() || !model->ParseFromString(bytes)) {
    throw Error(
        fmt::format("{} bytes that are not an ONNX model (protobuf parse failed)", bytes.size()));
  }
  return model;
}

Graph import_onnx(const std::string& path, const ImportOptions& options) {
  auto model = std::make_shared<onnx::ModelProto>();
  read_proto_file(path, *model, "ONNX model");
  std::string dir = std::filesystem::path(path).parent_path().string();
  try {
    Graph graph = import_onnx_model(std::move(model), options, dir.empty() ? "." : dir);
    if (graph.name.empty()) graph.name = std::filesystem::path(path).stem().string();
    return graph;
  } catch (const Error& error) {
    throw error.in_file(path);
  }
}

std::optional<std::int64_t> parse_dimension(std::string_view text) {
  const std::string part(text);
  std::size_t used = 0;
  long long dim = -1;
  try {
    dim = std::stoll(part, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (part.empty() || used != part.size() || dim < 0) return std::nullopt;
  return dim;
}

std::pair<std::string, Shape> parse_input_shape(std::string_view text) {
  auto malformed = [&]() {
    return Error(quote_untrusted(std::string(text)) + " is not NAME=D0,D1,...",
                 {.field = "--input-shape"});
  };
  std::size_t eq = text.rfind('=');
  if (eq == std::string_view::npos || eq == 0) throw malformed();
  std::string name(text.substr(0, eq));
  std::string_view dims = text.substr(eq + 1);
  Shape shape;
  while (!dims.empty()) {
    std::size_t comma = dims.find(',');
    std::optional<std::int64_t> dim = parse_dimension(dims.substr(0, comma));
    if (!dim) throw malformed();
    shape.push_back(*dim);
    if (comma == std::string_view::npos) break;
    dims.remove_prefix(comma + 1);
    if (dims.empty()) throw malformed();
  }
  return {std::move(name), std::move(shape)};
}

}  // namespace collage
