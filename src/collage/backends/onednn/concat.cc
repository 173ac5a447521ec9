#include "collage/backends/onednn/concat.h"

#include <fmt/format.h>

#include <array>
#include <optional>

#include "collage/backends/onednn/layout.h"
#include "collage/backends/onednn/node_checks.h"
#include "collage/backends/onednn/post_ops.h"

namespace collage::onednn {

Result<ConcatSpec> concat_spec(const Graph& graph, const Node& node) {
  if (!in_onnx_domain(node) || node.op_type != "Concat") return Failure{"not a Concat"};
  if (node.inputs.empty() || node.outputs.size() != 1) {
    return Failure{"Concat needs inputs and one output"};
  }
  if (auto problem = tensor_problem(graph, node, node.inputs.size())) return Failure{*problem};
  ConcatSpec spec;
  spec.output = node.outputs[0];
  const Shape& y = graph.type(spec.output).shape;
  const auto rank = static_cast<std::int64_t>(y.size());
  if (rank == 0) return Failure{"Concat of scalars"};
  std::int64_t axis = node.attributes.get_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return Failure{"Concat axis out of range"};
  spec.axis = static_cast<int>(axis);
  std::int64_t total = 0;
  for (ValueId input : node.inputs) {
    if (input == kNoValue) return Failure{"Concat with a missing input"};
    const Shape& x = graph.type(input).shape;
    if (static_cast<std::int64_t>(x.size()) != rank) return Failure{"Concat of unequal ranks"};
    for (std::int64_t d = 0; d < rank; ++d) {
      if (d != axis && x[static_cast<std::size_t>(d)] != y[static_cast<std::size_t>(d)]) {
        return Failure{"Concat inputs differ off the axis"};
      }
    }
    total += x[static_cast<std::size_t>(axis)];
    spec.inputs.push_back(input);
  }
  if (spec.inputs.empty() || total != y[static_cast<std::size_t>(axis)]) {
    return Failure{"Concat output does not add up"};
  }
  return spec;
}

namespace {

// The 4-D edge layout (channels-last or blocked) some of `sources` are in,
// when every source fits it; nullopt when none is or some cannot be.
std::optional<EdgeLayout> shared_edge_layout(const std::vector<memory::desc>& sources) {
  for (EdgeLayout layout :
       {EdgeLayout::kChannelsLast, EdgeLayout::kBlocked8, EdgeLayout::kBlocked16}) {
    bool some = false;
    bool all_fit = true;
    for (const memory::desc& source : sources) {
      const memory::dims dims = source.dims();
      const int block = edge_layout_block(layout);
      if (dims.size() != 4 || (block != 0 && dims[1] % block != 0)) {
        all_fit = false;
        break;
      }
      some = some || laid_out_edge_layout(source) == layout;
    }
    if (some && all_fit) return layout;
  }
  return std::nullopt;
}

// Whether `axis` is the innermost dimension of `desc`'s layout: unblocked,
// with stride 1. There oneDNN's concat interleaves short runs of its sources
// well; anywhere else (channels of a plain or blocked image, rows of a
// matrix) its "simple" concat copies the sources' long runs 10 to 15 times
// slower than a reorder of each source into its part of the output does
// (1x64x55x55 twice, along channels, 2 threads: 420-440 us against 26 us).
bool axis_is_innermost(const memory::desc& desc, int axis) {
  const dnnl_memory_desc_t& md = desc.data;
  return md.format_desc.blocking.inner_nblks == 0 && md.format_desc.blocking.strides[axis] == 1;
}

// The parts of `dst` that `sources` fill, in order along `axis`; nullopt when
// a part cannot be described (an offset inside a channel block).
std::optional<std::vector<memory::desc>> parts_along(const memory::desc& dst,
                                                     const std::vector<memory::desc>& sources,
                                                     int axis) {
  std::vector<memory::desc> parts;
  memory::dims offsets(dst.dims().size(), 0);
  try {
    for (const memory::desc& source : sources) {
      parts.push_back(dst.submemory_desc(source.dims(), offsets));
      offsets[static_cast<std::size_t>(axis)] += source.dims()[static_cast<std::size_t>(axis)];
    }
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
  return parts;
}

}  // namespace

void emit_concat(ProgramBuilder& builder, const ConcatSpec& spec) {
  std::vector<memory::desc> sources;
  for (ValueId input : spec.inputs) {
    const memory::dims dims = to_dims(builder.shape(input));
    const memory::desc current = builder.desc(input);
    // A value held as a reshape (other dims) is read back in plain order.
    sources.push_back(current.dims() == dims ? current : plain_desc(dims));
  }
  std::optional<dnnl::concat::primitive_desc> pd;
  pd.emplace(spec.axis, sources, builder.engine());
  // Sources in mixed layouts (a blocked producer beside plain ones) get
  // oneDNN's reference concat, several times slower than a reorder of the
  // plain ones into the blocked layout and a vectorized concat.
  if (is_reference_impl(*pd)) {
    if (std::optional<EdgeLayout> layout = shared_edge_layout(sources)) {
      for (memory::desc& source : sources) {
        const memory::dims dims = source.dims();
        source = edge_desc(Shape(dims.begin(), dims.end()), *layout);
      }
      pd.emplace(spec.axis, sources, builder.engine());
    }
  }
  if (!axis_is_innermost(pd->dst_desc(), spec.axis)) {
    if (auto parts = parts_along(pd->dst_desc(), sources, spec.axis)) {
      memory dst = builder.output_memory(spec.output, pd->dst_desc());
      for (std::size_t i = 0; i < sources.size(); ++i) {
        builder.copy_into(spec.inputs[i], builder.view_of(dst, (*parts)[i]));
      }
      builder.define(spec.output, dst);
      return;
    }
  }
  std::unordered_map<int, memory> args;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = builder.read(spec.inputs[i], sources[i]);
  }
  memory dst = builder.output_memory(spec.output, pd->dst_desc());
  args[DNNL_ARG_DST] = dst;
  builder.add(dnnl::concat(*pd), std::move(args));
  builder.define(spec.output, dst);
}

namespace {

// The layout every source lives in, when they share one in which a part of
// the channels of one image is dense: plain, or blocked with each source
// filling whole blocks. nullopt otherwise; the plain layout is kPlain.
std::optional<EdgeLayout> dense_parts_layout(ProgramBuilder& builder,
                                             const std::vector<ValueId>& inputs) {
  std::optional<EdgeLayout> shared;
  for (ValueId input : inputs) {
    const memory::desc current = builder.desc(input);
    const memory::dims dims = to_dims(builder.shape(input));
    if (current.dims() != dims || current.data_type() != memory::data_type::f32) {
      return std::nullopt;
    }
    EdgeLayout layout = EdgeLayout::kPlain;
    if (!is_plain(current)) {
      const std::optional<EdgeLayout> laid_out = laid_out_edge_layout(current);
      if (laid_out != EdgeLayout::kBlocked8 && laid_out != EdgeLayout::kBlocked16) {
        return std::nullopt;
      }
      layout = *laid_out;
      const memory::dim block = layout == EdgeLayout::kBlocked8 ? 8 : 16;
      if (dims.size() != 4 || dims[1] % block != 0) return std::nullopt;
    }
    if (shared && *shared != layout) return std::nullopt;
    shared = layout;
  }
  return shared;
}

}  // namespace

bool emit_normalized_concat(ProgramBuilder& builder, const ConcatSpec& concat,
                            const BatchNormSpec& norm, bool relu, ValueId output) {
  const Shape& shape = builder.shape(concat.output);
  if (concat.axis != 1 || shape.size() < 3 || shape[0] != 1) return false;
  for (ValueId parameter : {norm.scale, norm.bias, norm.mean, norm.variance}) {
    if (!builder.is_constant(parameter) || builder.constant(parameter).dtype() != DType::kFloat32) {
      return false;
    }
  }
  const std::optional<EdgeLayout> layout = dense_parts_layout(builder, concat.inputs);
  if (!layout) return false;
  std::int64_t inner = 1;
  for (std::size_t d = 2; d < shape.size(); ++d) inner *= shape[d];

  // A batch norm per source, over its channels' parameters. (oneDNN's
  // binary multiply with an add post-op, per channel, ran 3 to 5 times
  // slower than its batch norm, which runs at the speed of a copy.)
  auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
               dnnl::normalization_flags::use_shift;
  if (relu) flags = flags | dnnl::normalization_flags::fuse_norm_relu;
  struct Part {
    dnnl::batch_normalization_forward::primitive_desc pd;
    // scale, bias, mean and variance of the part's channels.
    std::array<ValueId, 4> parameters;
    std::int64_t first_channel;
  };
  const std::array<ValueId, 4> whole = {norm.scale, norm.bias, norm.mean, norm.variance};
  std::vector<Part> parts;
  std::int64_t first = 0;
  for (ValueId input : concat.inputs) {
    const Shape& part_shape = builder.shape(input);
    const std::int64_t channels = part_shape[1];
    dnnl::batch_normalization_forward::primitive_desc pd(
        dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_inference,
                                                edge_desc(part_shape, *layout), norm.epsilon,
                                                flags),
        builder.engine());
    if (is_reference_impl(pd)) return false;
    Part part{pd, {}, first};
    for (std::size_t k = 0; k < whole.size(); ++k) {
      const float* values = builder.constant(whole[k]).data<float>() + first;
      part.parameters[k] = builder.add_constant(
          Tensor::from_vector(std::vector<float>(values, values + channels), Shape{channels}));
    }
    parts.push_back(std::move(part));
    first += channels;
  }

  memory dst = builder.output_memory(output, edge_desc(shape, *layout));
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Part& part = parts[i];
    const memory::desc desc = part.pd.src_desc();
    const memory::dims channels = {desc.dims()[1]};
    const auto offset = static_cast<std::size_t>(part.first_channel * inner) * sizeof(float);
    builder.add(dnnl::batch_normalization_forward(part.pd),
                {{DNNL_ARG_SRC, builder.read(concat.inputs[i], desc)},
                 {DNNL_ARG_SCALE, builder.read_plain(part.parameters[0], channels)},
                 {DNNL_ARG_SHIFT, builder.read_plain(part.parameters[1], channels)},
                 {DNNL_ARG_MEAN, builder.read_plain(part.parameters[2], channels)},
                 {DNNL_ARG_VARIANCE, builder.read_plain(part.parameters[3], channels)},
                 {DNNL_ARG_DST, builder.part_of(dst, desc, offset)}});
  }
  builder.define(output, dst);
  return true;
}

}  // namespace collage::onednn
