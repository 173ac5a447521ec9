#include "collage/backends/native/layout_ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "collage/backends/native/compute_kernels.h"
#include "collage/backends/native/elementwise_math.h"
#include "collage/backends/native/op_registry.h"
#include "collage/ir/error.h"

namespace collage::native {
namespace {

bool is_pool(const Node& node) {
  return node.op_type == "MaxPool" || node.op_type == "AveragePool" ||
         node.op_type == "GlobalMaxPool" || node.op_type == "GlobalAveragePool";
}

// A pool runs in runs of channels when it is 2-D and leaves out Indices.
bool pool_in_layout(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || node.outputs.empty()) return false;
  for (std::size_t i = 1; i < node.outputs.size(); ++i) {
    if (node.outputs[i] != kNoValue) return false;
  }
  const TensorType& x = graph.type(node.input(0));
  if (x.dtype != DType::kFloat32 || x.rank() != 4) return false;
  if (node.op_type == "GlobalMaxPool" || node.op_type == "GlobalAveragePool") return true;
  return node.attributes.get_ints("kernel_shape").size() == 2;
}

bool concat_of_channels(const Graph& graph, const Node& node) {
  if (node.op_type != "Concat" || node.outputs.size() != 1) return false;
  const TensorType& y = graph.type(node.outputs[0]);
  if (y.rank() != 4 || y.dtype != DType::kFloat32) return false;
  const std::int64_t axis = node.attributes.get_int("axis", 0);
  return axis == 1 || axis == -3;
}

// Concat along channels of values stored in `layout`.
void concat_in_layout(std::span<const Tensor> inputs, Tensor& y, EdgeLayout layout, int threads) {
  const Shape& out = y.shape();
  const std::int64_t pixels = out[2] * out[3];
  float* yd = y.data<float>();
  if (layout == EdgeLayout::kChannelsLast) {
    // [N*H*W, C]: each input fills its columns of every row.
    const std::int64_t rows = out[0] * pixels;
    const std::int64_t channels = out[1];
#pragma omp parallel for num_threads(loop_threads(rows, channels, threads)) schedule(static)
    for (std::int64_t row = 0; row < rows; ++row) {
      std::int64_t offset = 0;
      for (const Tensor& x : inputs) {
        const std::int64_t c = x.shape()[1];
        std::memcpy(yd + row * channels + offset, x.data<float>() + row * c,
                    static_cast<std::size_t>(c) * sizeof(float));
        offset += c;
      }
    }
    return;
  }
  // Blocked: [N, C / block, H, W, block]; each input is whole blocks, a
  // contiguous run per image.
  const std::int64_t images = out[0];
  const std::int64_t image_size = out[1] * pixels;
  const std::int64_t parts = static_cast<std::int64_t>(inputs.size());
#pragma omp parallel for num_threads(loop_threads(images* parts, image_size / parts, threads)) \
    schedule(static)
  for (std::int64_t task = 0; task < images * parts; ++task) {
    const std::int64_t n = task / parts;
    const std::int64_t part = task % parts;
    std::int64_t offset = 0;
    for (std::int64_t k = 0; k < part; ++k)
      offset += inputs[static_cast<std::size_t>(k)].shape()[1];
    const Tensor& x = inputs[static_cast<std::size_t>(part)];
    const std::int64_t size = x.shape()[1] * pixels;
    std::memcpy(yd + n * image_size + offset * pixels, x.data<float>() + n * size,
                static_cast<std::size_t>(size) * sizeof(float));
  }
}

}  // namespace

std::int64_t layout_lanes(EdgeLayout layout, std::int64_t channels) {
  return layout == EdgeLayout::kChannelsLast ? channels : edge_layout_block(layout);
}

bool laid_out(const TensorType& type, EdgeLayout layout) {
  return layout != EdgeLayout::kPlain && !edge_layout_free(type);
}

Shape laid_out_dims(const Shape& shape, EdgeLayout layout) {
  Shape s = shape;
  while (s.size() < 4) s.insert(s.begin(), 1);
  if (layout == EdgeLayout::kPlain) return s;
  if (layout == EdgeLayout::kChannelsLast) return {s[0], s[2], s[3], s[1]};
  const std::int64_t block = edge_layout_block(layout);
  if (s[1] == 1) return {s[0], 1, s[2], s[3], 1};
  return {s[0], s[1] / block, s[2], s[3], block};
}

bool runs_in_layout(const Graph& graph, const Node& node, EdgeLayout layout) {
  if (layout == EdgeLayout::kPlain) return true;
  bool any = false;
  auto check = [&](ValueId id) {
    if (id == kNoValue) return true;
    const TensorType& type = graph.type(id);
    if (type.at_run_time) return false;
    if (!laid_out(type, layout)) return true;
    any = true;
    return type.dtype == DType::kFloat32 && edge_layout_fits(layout, type);
  };
  for (ValueId id : node.inputs) {
    if (!check(id)) return false;
  }
  for (ValueId id : node.outputs) {
    if (!check(id)) return false;
  }
  if (!any) return true;
  if (!node_supported(graph, node)) return false;
  if (float_elementwise_fn(graph, node)) return graph.type(node.outputs[0]).rank() == 4;
  if (is_pool(node)) return pool_in_layout(graph, node);
  if (node.op_type == "GroupNormalization") return graph.type(node.input(0)).rank() == 4;
  if (node.op_type == "Conv") return depthwise_in_lanes_fits(graph, node);
  return concat_of_channels(graph, node);
}

void run_in_layout(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                   std::span<Tensor> outputs, EdgeLayout layout, int threads,
                   const DepthwiseOperands* depthwise) {
  if (depthwise != nullptr && node.op_type != "Conv") {
    throw Error(fmt::format("{} takes no prepared convolution operands", node.op_type),
                {.node = node.name});
  }
  if (is_pool(node)) {
    const Tensor& x = inputs[0];
    return pool_in_lanes(node, x, outputs[0], layout_lanes(layout, x.shape()[1]), threads);
  }
  if (node.op_type == "GroupNormalization") {
    return group_norm_in_lanes(node, inputs, outputs[0], layout_lanes(layout, inputs[0].shape()[1]),
                               threads);
  }
  if (node.op_type == "Conv") {
    return depthwise_conv_in_lanes(node, inputs, outputs[0],
                                   layout_lanes(layout, inputs[0].shape()[1]), threads, depthwise);
  }
  if (concat_of_channels(graph, node)) {
    return concat_in_layout(inputs, outputs[0], layout, threads);
  }
  throw Error(
      fmt::format("{} does not run on values stored {}", node.op_type, edge_layout_name(layout)),
      {.node = node.name});
}

}  // namespace collage::native
