#include "collage/ir/passes/trim_conv_taps.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collage/ir/passes/rewrite_util.h"
#include "collage/ir/window.h"

namespace collage {
namespace {

// The taps [first, last] of an axis that the trimmed Conv keeps.
struct TapRun {
  std::int64_t first = 0;
  std::int64_t last = 0;
};

// The run of taps of `axis` to keep: those that read the input (they form
// one run: the positions a tap reads move monotonically with it), widened
// where cutting a tap would take a pad below zero. None when no tap reads
// the input (the output is the bias alone; left as it is).
std::optional<TapRun> live_taps(const WindowAxis& axis) {
  auto reads_input = [&](std::int64_t k) { return axis.outputs_reading_tap(k).size() > 0; };
  std::int64_t first = 0;
  while (first < axis.kernel && !reads_input(first)) ++first;
  if (first == axis.kernel) return std::nullopt;
  std::int64_t last = axis.kernel - 1;
  while (!reads_input(last)) --last;
  first = std::min(first, axis.pad_begin / axis.dilation);
  last = std::max(last, axis.kernel - 1 - axis.pad_end / axis.dilation);
  return TapRun{first, last};
}

// The spatial axes of a Conv node whose taps can be trimmed, or none when
// the node is not such a Conv (see trim_conv_taps()).
std::optional<std::vector<WindowAxis>> conv_axes(const Graph& graph, const Node& node) {
  if (!is_onnx_op(node, "Conv") || node.inputs.size() < 2 || node.outputs.size() != 1) return {};
  if (node.attributes.get_string("auto_pad", "NOTSET") != "NOTSET") return {};
  const Tensor* weight = float_constant(graph, node.inputs[1]);
  if (weight == nullptr) return {};
  const Shape& x = graph.type(node.inputs[0]).shape;
  const Shape& y = graph.type(node.outputs[0]).shape;
  const Shape& w = weight->shape();
  if (x.size() < 3 || w.size() != x.size() || y.size() != x.size()) return {};
  const Result<Window> window =
      forward_window(node, Shape(x.begin() + 2, x.end()), Shape(w.begin() + 2, w.end()));
  // Only a graph whose output shape is the Conv's own.
  if (!window.ok() || window.value().output_shape() != Shape(y.begin() + 2, y.end())) return {};
  return window.value().axes;
}

// The taps `runs` of `weight` ([M, C/group, k...]), as a weight of its own.
Tensor sliced_weight(const Tensor& weight, const std::vector<TapRun>& runs) {
  const Shape& from = weight.shape();
  Shape to = from;
  for (std::size_t a = 0; a < runs.size(); ++a) to[a + 2] = runs[a].last - runs[a].first + 1;
  Tensor out = Tensor::allocate(TensorType{DType::kFloat32, to});
  const float* source = weight.data<float>();
  float* target = out.data<float>();
  // Row-major strides of the source.
  std::vector<std::int64_t> stride(from.size(), 1);
  for (std::size_t d = from.size() - 1; d > 0; --d) stride[d - 1] = stride[d] * from[d];
  std::vector<std::int64_t> index(to.size(), 0);
  for (std::int64_t i = 0; i < out.numel(); ++i) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < to.size(); ++d) {
      const std::int64_t offset = d >= 2 ? runs[d - 2].first : 0;
      at += (index[d] + offset) * stride[d];
    }
    target[i] = source[at];
    for (std::size_t d = to.size(); d-- > 0;) {
      if (++index[d] < to[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

}  // namespace

int trim_conv_taps(Graph& graph) {
  int trimmed = 0;
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(static_cast<NodeId>(n));
    std::optional<std::vector<WindowAxis>> axes = conv_axes(graph, node);
    if (!axes) continue;
    std::vector<TapRun> runs;
    bool cuts = false;
    for (const WindowAxis& axis : *axes) {
      std::optional<TapRun> run = live_taps(axis);
      if (!run) break;
      cuts = cuts || run->first > 0 || run->last < axis.kernel - 1;
      runs.push_back(*run);
    }
    if (runs.size() != axes->size() || !cuts) continue;

    const std::size_t spatial = axes->size();
    std::vector<std::int64_t> kernel(spatial), dilations(spatial), pads(2 * spatial);
    for (std::size_t a = 0; a < spatial; ++a) {
      const WindowAxis& axis = (*axes)[a];
      kernel[a] = runs[a].last - runs[a].first + 1;
      // A lone tap has no spacing; dilation 1 says so to the backends'
      // pattern rules (a 1x1 convolution).
      dilations[a] = kernel[a] == 1 ? 1 : axis.dilation;
      pads[a] = axis.pad_begin - runs[a].first * axis.dilation;
      pads[a + spatial] = axis.pad_end - (axis.kernel - 1 - runs[a].last) * axis.dilation;
    }
    const std::string name =
        unused_value_name(graph, graph.value(node.outputs[0]).name + "/trimmed_weight");
    const ValueId weight =
        graph.add_constant(name, sliced_weight(*float_constant(graph, node.inputs[1]), runs));
    Node& conv = graph.node(static_cast<NodeId>(n));
    conv.inputs[1] = weight;
    if (conv.attributes.has("kernel_shape")) conv.attributes.set("kernel_shape", kernel);
    conv.attributes.set("dilations", dilations);
    conv.attributes.set("pads", pads);
    ++trimmed;
  }
  if (trimmed > 0) graph.prune();
  return trimmed;
}

}  // namespace collage
