#include "collage/backends/onednn/pooling.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "collage/backends/onednn/layout.h"
#include "collage/backends/onednn/node_checks.h"

namespace collage::onednn {
namespace {

// MaxPool of 8-bit values, as quantized models pool them: oneDNN's int8
// max pooling, exact.
bool is_eight_bit_max_pool(const Graph& graph, const Node& node) {
  if (node.op_type != "MaxPool" || node.inputs.size() != 1 || node.outputs.size() != 1) {
    return false;
  }
  const DType x = graph.type(node.input(0)).dtype;
  return (x == DType::kUInt8 || x == DType::kInt8) && graph.type(node.outputs[0]).dtype == x &&
         graph.type(node.input(0)).numel() > 0;
}

bool is_quantized_average(const Node& node) {
  return node.domain == "com.microsoft" &&
         (node.op_type == "QLinearAveragePool" || node.op_type == "QLinearGlobalAveragePool");
}

// The post-op of a quantized average (inputs X, x_scale, x_zero_point,
// y_scale, y_zero_point), or why oneDNN cannot run it.
Result<PoolingSpec::Requantize> requantize_spec(const Graph& graph, const Node& node) {
  const std::optional<double> x_scale = scalar_input(graph, node, 1);
  const std::optional<double> x_zero = zero_point_input(graph, node, 2);
  const std::optional<double> y_scale = scalar_input(graph, node, 3);
  const std::optional<double> y_zero = zero_point_input(graph, node, 4);
  if (!x_scale || !x_zero || !y_scale || !y_zero) {
    return Failure{fmt::format("{} with scales or zero points computed at run time", node.op_type)};
  }
  const DType x = graph.type(node.input(0)).dtype;
  if (!eight_bit_type(x) || graph.type(node.outputs[0]).dtype != x) {
    return Failure{fmt::format("{} of other than 8-bit values", node.op_type)};
  }
  if (node.attributes.get_int("channels_last", 0) != 0) {
    return Failure{fmt::format("{} with channels_last", node.op_type)};
  }
  if (node.op_type == "QLinearAveragePool" && *x_zero != 0 &&
      node.attributes.get_int("count_include_pad", 0) != 0) {
    const std::vector<std::int64_t> pads = node.attributes.has("pads")
                                               ? node.attributes.get_ints("pads")
                                               : std::vector<std::int64_t>{};
    const bool padded =
        std::any_of(pads.begin(), pads.end(), [](std::int64_t p) { return p != 0; });
    const std::string auto_pad = node.attributes.get_string("auto_pad", "NOTSET");
    if (padded || (auto_pad != "NOTSET" && auto_pad != "VALID")) {
      return Failure{"QLinearAveragePool counting padding, with an input zero point other than 0"};
    }
  }
  const double scale = *x_scale / *y_scale;
  return PoolingSpec::Requantize{static_cast<float>(scale),
                                 static_cast<float>(*y_zero - *x_zero * scale)};
}

Result<PoolingSpec> common_spec(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || node.input(0) == kNoValue || node.outputs.size() != 1) {
    return Failure{fmt::format("{} needs one input and one output (no Indices)", node.op_type)};
  }
  PoolingSpec spec;
  if (is_quantized_average(node)) {
    if (node.inputs.size() != 5 || graph.type(node.input(0)).numel() == 0) {
      return Failure{fmt::format("{} needs X and four quantization parameters", node.op_type)};
    }
    Result<PoolingSpec::Requantize> requantize = requantize_spec(graph, node);
    if (!requantize) return Failure{requantize.error()};
    spec.requantize = *requantize;
  } else if (!is_eight_bit_max_pool(graph, node)) {
    if (auto problem = tensor_problem(graph, node, 1)) return Failure{*problem};
  }
  spec.type = *onednn_data_type(graph.type(node.input(0)).dtype);
  spec.input = node.input(0);
  spec.output = node.outputs[0];
  const Shape& x = graph.type(spec.input).shape;
  const Shape& y = graph.type(spec.output).shape;
  if (x.size() < 3 || x.size() > 5 || y.size() != x.size() || y[0] != x[0] || y[1] != x[1]) {
    return Failure{fmt::format("{} supports 1 to 3 spatial dims", node.op_type)};
  }
  spec.src_dims = to_dims(x);
  spec.dst_dims = to_dims(y);
  return spec;
}

Result<PoolingSpec> global_spec(const Graph& graph, const Node& node) {
  Result<PoolingSpec> result = common_spec(graph, node);
  if (!result) return result;
  PoolingSpec& spec = result.value();
  spec.algorithm = node.op_type == "GlobalMaxPool" ? dnnl::algorithm::pooling_max
                                                   : dnnl::algorithm::pooling_avg_exclude_padding;
  const memory::dims kernel(spec.src_dims.begin() + 2, spec.src_dims.end());
  spec.window.kernel = kernel;
  spec.window.strides.assign(kernel.size(), 1);
  spec.window.dilations.assign(kernel.size(), 1);
  spec.window.padding_l.assign(kernel.size(), 0);
  spec.window.padding_r.assign(kernel.size(), 0);
  for (std::size_t i = 2; i < spec.dst_dims.size(); ++i) {
    if (spec.dst_dims[i] != 1) return Failure{fmt::format("{} output is not 1x1", node.op_type)};
  }
  return result;
}

Result<PoolingSpec> windowed_spec(const Graph& graph, const Node& node) {
  Result<PoolingSpec> result = common_spec(graph, node);
  if (!result) return result;
  PoolingSpec& spec = result.value();
  const Attributes& attrs = node.attributes;
  const bool max = node.op_type == "MaxPool";
  const bool count_pad = !max && attrs.get_int("count_include_pad", 0) != 0;
  spec.algorithm = max         ? dnnl::algorithm::pooling_max
                   : count_pad ? dnnl::algorithm::pooling_avg_include_padding
                               : dnnl::algorithm::pooling_avg_exclude_padding;
  if (!attrs.has("kernel_shape"))
    return Failure{fmt::format("{} without kernel_shape", node.op_type)};
  const memory::dims kernel = attrs.get_ints("kernel_shape");
  const memory::dims in(spec.src_dims.begin() + 2, spec.src_dims.end());
  const memory::dims out(spec.dst_dims.begin() + 2, spec.dst_dims.end());
  Result<Window> window = forward_window(node, in, kernel);
  if (!window) return Failure{window.error()};
  if (window->output_shape() != out) {
    return Failure{fmt::format("{} output shape disagrees with its attributes", node.op_type)};
  }
  spec.window = forward_dims(*window);
  for (std::size_t i = 0; i < window->rank(); ++i) {
    const WindowAxis& axis = window->axes[i];
    // oneDNN's output size always rounds down: a ceil_mode window that reads
    // past the declared end padding needs that much more of it.
    const memory::dim reached = axis.end_padding_reached();
    if (reached > axis.pad_end && count_pad) {
      return Failure{"AveragePool with count_include_pad whose ceil_mode windows pass the pads"};
    }
    spec.window.padding_r[i] = std::max<memory::dim>(reached, 0);
    // A window lying entirely in padding has no ONNX meaning.
    if (axis.pad_begin >= axis.extent() || spec.window.padding_r[i] >= axis.extent()) {
      return Failure{fmt::format("{} pads reach a whole window", node.op_type)};
    }
  }
  return result;
}

}  // namespace

Result<PoolingSpec> pooling_spec(const Graph& graph, const Node& node) {
  if (is_quantized_average(node)) {
    return node.op_type == "QLinearAveragePool" ? windowed_spec(graph, node)
                                                : global_spec(graph, node);
  }
  if (!in_onnx_domain(node)) return Failure{"not an ONNX-domain op"};
  if (node.op_type == "MaxPool" || node.op_type == "AveragePool") return windowed_spec(graph, node);
  if (node.op_type == "GlobalMaxPool" || node.op_type == "GlobalAveragePool") {
    return global_spec(graph, node);
  }
  return Failure{fmt::format("{} is not a pooling op", node.op_type)};
}

void emit_pooling(ProgramBuilder& builder, const PoolingSpec& spec) {
  const memory::desc current = builder.desc(spec.input);
  memory::desc src_md =
      current.dims() == spec.src_dims ? current : plain_desc(spec.src_dims, spec.type);
  // oneDNN pools 8-bit values with a generated kernel in channels-last only
  // (plain ones fall to its reference kernel, 30 times slower).
  if (spec.type != memory::data_type::f32 && is_plain(src_md)) {
    const memory::format_tag channels_last[] = {memory::format_tag::nwc, memory::format_tag::nhwc,
                                                memory::format_tag::ndhwc};
    src_md = memory::desc(spec.src_dims, spec.type, channels_last[spec.src_dims.size() - 3]);
  }
  const WindowDims& w = spec.window;
  dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, spec.algorithm, src_md,
                                      any_desc(spec.dst_dims, spec.type), w.strides, w.kernel,
                                      w.onednn_dilations(), w.padding_l, w.padding_r);
  dnnl::primitive_attr attr;
  if (spec.requantize) {
    dnnl::post_ops requantize;
    requantize.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, spec.requantize->scale,
                              spec.requantize->shift);
    attr.set_post_ops(requantize);
  }
  dnnl::pooling_v2_forward::primitive_desc pd(desc, attr, builder.engine());
  memory src = builder.read(spec.input, src_md);
  memory dst = builder.output_memory(spec.output, pd.dst_desc());
  builder.add(dnnl::pooling_v2_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  builder.define(spec.output, dst);
}

}  // namespace collage::onednn
