#include "collage/onnx/old_opset.h"

#include <fmt/format.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <map>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "collage/ir/error.h"
#include "collage/onnx/importer.h"

namespace collage {
namespace {

std::string normalized_domain(const std::string& domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

// The version of the default domain the model imports; 0 when none.
std::int64_t default_opset(const onnx::ModelProto& model) {
  for (const auto& opset : model.opset_import()) {
    if (normalized_domain(opset.domain()).empty()) return opset.version();
  }
  return 0;
}

// The description of `name` in `model` (a graph input or what ONNX's
// inference or describe_initializers added), or null.
const onnx::ValueInfoProto* description(const onnx::ModelProto& model, const std::string& name) {
  for (const auto* list : {&model.graph().input(), &model.graph().value_info()}) {
    for (const auto& info : *list) {
      if (info.name() == name) return &info;
    }
  }
  return nullptr;
}

// The rank ONNX's inference gave `name` in `model`, or -1.
int inferred_rank(const onnx::ModelProto& model, const std::string& name) {
  const onnx::ValueInfoProto* info = description(model, name);
  if (info == nullptr || !info->type().tensor_type().has_shape()) return -1;
  return info->type().tensor_type().shape().dim_size();
}

// Before opset 7 a binary op with `broadcast = 1` and an `axis` lined its
// second input up with the first from that axis; from opset 7 inputs line
// up from the right, and ONNX 1.12's converter fails on the first form. So
// the second input gets trailing axes of one (an Unsqueeze, typed for the
// converter) and the `axis` goes.
void align_axis_broadcasts(onnx::ModelProto& model) {
  static const std::set<std::string> kBinary = {"Add", "Sub", "Mul",   "Div",     "Pow", "And",
                                                "Or",  "Xor", "Equal", "Greater", "Less"};
  onnx::GraphProto& graph = *model.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (int n = 0; n < graph.node_size(); ++n) {
    onnx::NodeProto node = graph.node(n);
    const auto axis_attribute =
        std::find_if(node.attribute().begin(), node.attribute().end(),
                     [](const onnx::AttributeProto& a) { return a.name() == "axis"; });
    const int first = node.input_size() == 2 ? inferred_rank(model, node.input(0)) : -1;
    const int second = node.input_size() == 2 ? inferred_rank(model, node.input(1)) : -1;
    if (kBinary.count(node.op_type()) == 0 || axis_attribute == node.attribute().end() ||
        first < 0 || second < 0) {
      *nodes.Add() = std::move(node);
      continue;
    }
    std::int64_t axis = axis_attribute->i();
    if (axis < 0) axis += first;
    const std::int64_t trailing = first - axis - second;
    node.mutable_attribute()->erase(axis_attribute);
    if (trailing > 0) {
      const std::string aligned = node.input(1) + "_aligned_" + std::to_string(n);
      onnx::NodeProto& unsqueeze = *nodes.Add();
      unsqueeze.set_op_type("Unsqueeze");
      unsqueeze.set_name(aligned);
      unsqueeze.add_input(node.input(1));
      unsqueeze.add_output(aligned);
      onnx::AttributeProto& axes = *unsqueeze.add_attribute();
      axes.set_name("axes");
      axes.set_type(onnx::AttributeProto::INTS);
      for (std::int64_t a = 0; a < trailing; ++a) axes.add_ints(second + a);
      onnx::ValueInfoProto typed = *description(model, node.input(1));
      typed.set_name(aligned);
      auto& shape = *typed.mutable_type()->mutable_tensor_type()->mutable_shape();
      for (std::int64_t a = 0; a < trailing; ++a) shape.add_dim()->set_dim_value(1);
      *graph.add_value_info() = std::move(typed);
      node.set_input(1, aligned);
    }
    *nodes.Add() = std::move(node);
  }
  graph.mutable_node()->Swap(&nodes);
}

// PRelu before opset 7 applied a slope of C values per channel (axis 1);
// from opset 7 the slope broadcasts from the right. A constant slope of C
// values gets trailing axes of one, so that it still lands on axis 1.
void keep_prelu_slopes_per_channel(onnx::ModelProto& model) {
  onnx::GraphProto& graph = *model.mutable_graph();
  for (const auto& node : graph.node()) {
    if (node.op_type() != "PRelu" || node.input_size() != 2) continue;
    const int rank = inferred_rank(model, node.input(0));
    if (rank < 3) continue;
    for (auto& initializer : *graph.mutable_initializer()) {
      if (initializer.name() != node.input(1) || initializer.dims_size() != 1 ||
          initializer.dims(0) <= 1) {
        continue;
      }
      for (int axis = 2; axis < rank; ++axis) initializer.add_dims(1);
    }
  }
}

// The converter reads the shapes of values from their descriptions only,
// which initializers that are not also graph inputs (IR version 4 on) lack.
void describe_initializers(onnx::ModelProto& model) {
  onnx::GraphProto& graph = *model.mutable_graph();
  std::set<std::string> described;
  for (const auto* list : {&graph.input(), &graph.value_info()}) {
    for (const auto& info : *list) described.insert(info.name());
  }
  for (const auto& initializer : graph.initializer()) {
    if (described.count(initializer.name()) != 0) continue;
    onnx::ValueInfoProto& info = *graph.add_value_info();
    info.set_name(initializer.name());
    auto& tensor = *info.mutable_type()->mutable_tensor_type();
    tensor.set_elem_type(initializer.data_type());
    for (const std::int64_t dim : initializer.dims())
      tensor.mutable_shape()->add_dim()->set_dim_value(dim);
  }
}

// Throws Error unless `graph` (and each graph in its nodes' attributes) is
// fit for ONNX's version converter, which checks neither of two things and
// crashes on a model that breaks them:
// - every value a node or the graph's outputs read is defined first: an
//   input, an initializer, an output of an earlier node, or a value of an
//   enclosing graph (`outer`);
// - every node of the default domain has as many inputs and outputs as its
//   schema at `opset` allows.
void check_convertible(const onnx::GraphProto& graph, std::int64_t opset,
                       std::unordered_set<std::string> outer = {}) {
  std::unordered_set<std::string>& defined = outer;
  for (const auto& input : graph.input()) defined.insert(input.name());
  for (const auto& initializer : graph.initializer()) defined.insert(initializer.name());
  auto require = [&](const std::string& name, const std::string& node) {
    if (name.empty() || defined.count(name) != 0) return;
    throw Error("reads " + quote_untrusted(name) + ", which nothing defines before it",
                {.node = node});
  };
  auto require_count = [&](const onnx::NodeProto& node, const char* what, int count, int min,
                           int max) {
    if (count >= min && count <= max) return;
    throw Error(fmt::format("{} of opset {} takes {} to {} {}, not {}",
                            quote_untrusted(node.op_type()), opset, min, max, what, count),
                {.node = node.name()});
  };
  for (const auto& node : graph.node()) {
    for (const std::string& input : node.input()) require(input, node.name());
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    if (const onnx::OpSchema* schema =
            default_domain
                ? onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), "")
                : nullptr) {
      require_count(node, "inputs", node.input_size(), schema->min_input(), schema->max_input());
      require_count(node, "outputs", node.output_size(), schema->min_output(),
                    schema->max_output());
    }
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) check_convertible(attribute.g(), opset, defined);
      for (const auto& body : attribute.graphs()) check_convertible(body, opset, defined);
    }
    for (const std::string& output : node.output()) defined.insert(output);
  }
  for (const auto& output : graph.output()) {
    if (defined.count(output.name()) == 0) {
      throw Error("is a graph output that nothing defines",
                  {.field = "output " + quote_untrusted(output.name())});
    }
  }
}

// ONNX's schemas, except that the shape inference of the sliding-window
// ops (Conv, ConvTranspose, MaxPool, AveragePool, LpPool) first checks what
// the opset 1-6 functions index by without checking: that the kernel's
// rank, from `kernel_shape` or the weights, and each window attribute's
// length match the input's spatial rank. Those functions read past their
// vectors and crash on a model that breaks it.
class CheckedWindowSchemas final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& op_type, const int max_inclusive_version,
                                  const std::string& domain) const override {
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Instance()->GetSchema(op_type, max_inclusive_version, domain);
    if (schema == nullptr || !normalized_domain(domain).empty() || !is_window_op(op_type))
      return schema;
    auto [found, added] = checked_.try_emplace(schema, *schema);
    if (added) {
      found->second.TypeAndShapeInferenceFunction(
          [infer = schema->GetTypeAndShapeInferenceFunction()](onnx::InferenceContext& context) {
            check_window(context);
            if (infer) infer(context);
          });
    }
    return &found->second;
  }

 private:
  static bool is_window_op(const std::string& op_type) {
    static const std::set<std::string> kOps = {"Conv", "ConvTranspose", "MaxPool", "AveragePool",
                                               "LpPool"};
    return kOps.count(op_type) != 0;
  }

  static void check_window(onnx::InferenceContext& context) {
    if (!onnx::hasInputShape(context, 0)) return;
    const int rank = context.getInputType(0)->tensor_type().shape().dim_size();
    if (rank < 2) fail_shape_inference("the input has rank ", rank, ", not at least 2");
    const std::size_t spatial = static_cast<std::size_t>(rank - 2);
    auto check_length = [&](const char* name, std::size_t per_axis) {
      std::vector<std::int64_t> values;
      if (onnx::getRepeatedAttribute(context, name, values) &&
          values.size() != spatial * per_axis) {
        fail_shape_inference("attribute ", name, " has ", values.size(),
                             " values where the input's", " rank ", rank, " needs ",
                             spatial * per_axis);
      }
    };
    for (const char* name :
         {"kernel_shape", "strides", "dilations", "output_shape", "output_padding"}) {
      check_length(name, 1);
    }
    check_length("pads", 2);
    if (context.getAttribute("kernel_shape") == nullptr && onnx::hasInputShape(context, 1)) {
      const int weights_rank = context.getInputType(1)->tensor_type().shape().dim_size();
      if (weights_rank != rank) {
        fail_shape_inference("the weights have rank ", weights_rank, " where the input has rank ",
                             rank);
      }
    }
  }

  mutable std::map<const onnx::OpSchema*, onnx::OpSchema> checked_;
};

}  // namespace

std::shared_ptr<const onnx::ModelProto> in_readable_opset(
    std::shared_ptr<const onnx::ModelProto> model) {
  const std::int64_t opset = default_opset(*model);
  if (opset < 1 || opset >= kMinOpset) return model;
  check_convertible(model->graph(), opset);
  try {
    onnx::ModelProto typed = *model;
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false, /*strict_mode_val=*/0,
                                        /*data_prop_val=*/false);
    const CheckedWindowSchemas schemas;
    onnx::shape_inference::InferShapes(typed, &schemas, options);
    keep_prelu_slopes_per_channel(typed);
    describe_initializers(typed);
    align_axis_broadcasts(typed);
    return std::make_shared<const onnx::ModelProto>(
        onnx::version_conversion::ConvertVersion(typed, static_cast<int>(kMinOpset)));
  } catch (const std::exception& error) {
    throw Error(fmt::format("opset {} of the default ONNX domain could not be converted to opset "
                            "{}: {}",
                            opset, kMinOpset, error.what()),
                {.field = "opset_import"});
  }
}

}  // namespace collage
