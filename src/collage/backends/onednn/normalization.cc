#include "collage/backends/onednn/normalization.h"

#include <fmt/format.h>

#include "collage/backends/onednn/node_checks.h"

namespace collage::onednn {
namespace {

using dnnl::normalization_flags;

// Extra outputs (training statistics) are accepted only when omitted.
bool single_output(const Node& node) {
  if (node.outputs.empty() || node.outputs[0] == kNoValue) return false;
  for (std::size_t i = 1; i < node.outputs.size(); ++i) {
    if (node.outputs[i] != kNoValue) return false;
  }
  return true;
}

}  // namespace

Result<BatchNormSpec> batch_norm_spec(const Graph& graph, const Node& node) {
  if (node.op_type != "BatchNormalization" || !in_onnx_domain(node)) {
    return Failure{fmt::format("{} is not BatchNormalization", node.op_type)};
  }
  if (auto problem = tensor_problem(graph, node, 5)) return Failure{*problem};
  if (node.inputs.size() != 5 || !single_output(node)) {
    return Failure{"BatchNormalization needs 5 inputs and only the Y output (inference)"};
  }
  if (node.attributes.get_int("training_mode", 0) != 0 ||
      node.attributes.get_int("spatial", 1) != 1) {
    return Failure{"BatchNormalization in training or non-spatial mode"};
  }
  BatchNormSpec spec{node.input(0),
                     node.input(1),
                     node.input(2),
                     node.input(3),
                     node.input(4),
                     node.outputs[0],
                     node.attributes.get_float("epsilon", 1e-5f),
                     {}};
  const Shape& x = graph.type(spec.input).shape;
  if (x.size() < 2 || x.size() > 5) return Failure{"BatchNormalization supports ranks 2 to 5"};
  for (ValueId param : {spec.scale, spec.bias, spec.mean, spec.variance}) {
    if (graph.type(param).shape != Shape{x[1]}) {
      return Failure{fmt::format("BatchNormalization parameters must be [{}]", x[1])};
    }
  }
  if (graph.type(spec.output).shape != x) return Failure{"BatchNormalization changes the shape"};
  spec.dims = to_dims(x);
  return spec;
}

void emit_batch_norm(ProgramBuilder& builder, const BatchNormSpec& spec, bool fuse_relu,
                     ValueId relu_output) {
  const memory::desc current = builder.desc(spec.input);
  // Batch normalization is fastest in the producer's (blocked) layout.
  const memory::desc layout = current.dims() == spec.dims ? current : plain_desc(spec.dims);
  auto flags = normalization_flags::use_global_stats | normalization_flags::use_scale |
               normalization_flags::use_shift;
  if (fuse_relu) flags = flags | normalization_flags::fuse_norm_relu;
  dnnl::batch_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, layout,
                                               spec.epsilon, flags);
  dnnl::batch_normalization_forward::primitive_desc pd(desc, builder.engine());
  const memory::dims channels = {spec.dims[1]};
  const ValueId output = fuse_relu ? relu_output : spec.output;
  memory dst = builder.output_memory(output, pd.dst_desc());
  builder.add(dnnl::batch_normalization_forward(pd),
              {{DNNL_ARG_SRC, builder.read(spec.input, layout)},
               {DNNL_ARG_MEAN, builder.read_plain(spec.mean, channels)},
               {DNNL_ARG_VARIANCE, builder.read_plain(spec.variance, channels)},
               {DNNL_ARG_SCALE, builder.read_plain(spec.scale, channels)},
               {DNNL_ARG_SHIFT, builder.read_plain(spec.bias, channels)},
               {DNNL_ARG_DST, dst}});
  builder.define(output, dst);
}

Result<LayerNormSpec> layer_norm_spec(const Graph& graph, const Node& node) {
  if (node.op_type != "LayerNormalization" || !in_onnx_domain(node)) {
    return Failure{fmt::format("{} is not LayerNormalization", node.op_type)};
  }
  if (auto problem = tensor_problem(graph, node, 3)) return Failure{*problem};
  if (node.input(0) == kNoValue || node.input(1) == kNoValue || !single_output(node)) {
    return Failure{"LayerNormalization needs X, Scale and only the Y output"};
  }
  // stash_type 1 (float32) is the precision oneDNN computes the statistics in.
  if (node.attributes.get_int("stash_type", 1) != 1) {
    return Failure{"LayerNormalization stash_type other than 1 (float32)"};
  }
  LayerNormSpec spec{node.input(0),
                     node.input(1),
                     node.input(2),
                     node.outputs[0],
                     node.attributes.get_float("epsilon", 1e-5f),
                     {}};
  const Shape& x = graph.type(spec.input).shape;
  const auto rank = static_cast<std::int64_t>(x.size());
  std::int64_t axis = node.attributes.get_int("axis", -1);
  if (axis < 0) axis += rank;
  if (rank < 1 || axis < 0 || axis >= rank) return Failure{"LayerNormalization axis out of range"};
  const Shape inner_shape(x.begin() + axis, x.end());
  const std::int64_t inner = shape_numel(inner_shape);
  spec.dims = {shape_numel(x) / inner, inner};
  // Scale and B broadcasting below the normalized shape would need a copy per row.
  if (graph.type(spec.scale).numel() != inner ||
      (spec.bias != kNoValue && graph.type(spec.bias).numel() != inner)) {
    return Failure{"LayerNormalization Scale and B must have the normalized shape"};
  }
  if (graph.type(spec.output).shape != x) return Failure{"LayerNormalization changes the shape"};
  return spec;
}

void emit_layer_norm(ProgramBuilder& builder, const LayerNormSpec& spec) {
  const memory::desc layout = plain_desc(spec.dims);
  auto flags = normalization_flags::use_scale;
  if (spec.bias != kNoValue) flags = flags | normalization_flags::use_shift;
  dnnl::layer_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, layout,
                                               spec.epsilon, flags);
  dnnl::layer_normalization_forward::primitive_desc pd(desc, builder.engine());
  const memory::dims inner = {spec.dims[1]};
  memory dst = builder.output_memory(spec.output, pd.dst_desc());
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, builder.read(spec.input, layout)},
                                       {DNNL_ARG_SCALE, builder.read_plain(spec.scale, inner)},
                                       {DNNL_ARG_DST, dst}};
  if (spec.bias != kNoValue) args[DNNL_ARG_SHIFT] = builder.read_plain(spec.bias, inner);
  // Inference computes the statistics internally, but some implementations
  // still ask for buffers to hold them.
  for (auto [arg, stat] : {std::pair{DNNL_ARG_MEAN, pd.mean_desc()},
                           std::pair{DNNL_ARG_VARIANCE, pd.variance_desc()}}) {
    if (stat.is_zero()) continue;
    memory buffer(stat, builder.engine());
    args[arg] = buffer;
  }
  builder.add(dnnl::layer_normalization_forward(pd), std::move(args));
  builder.define(spec.output, dst);
}

}  // namespace collage::onednn
