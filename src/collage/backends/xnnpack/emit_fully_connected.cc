// Fully connected layers: Gemm, and MatMul by a constant matrix (with a
// following bias Add folded in), over plain values.
#include <cstdint>
#include <utility>
#include <vector>

#include "collage/backends/xnnpack/emitters.h"
#include "collage/backends/xnnpack/op_support.h"

namespace collage::xnnpack {
namespace {

// y = x * filter^T + bias over the last axis of x; `bias` may be kInvalidId.
bool fully_connected(SubgraphBuilder& builder, std::uint32_t x, std::uint32_t filter,
                     std::uint32_t bias, std::uint32_t y) {
  return builder.check(
      xnn_define_fully_connected(builder.subgraph(), kNoMin, kNoMax, x, filter, bias, y, 0),
      "fully connected");
}

// Gemm's alpha * B as XNNPACK's [N, K] filter: B as it is when transB,
// transposed otherwise.
std::vector<float> gemm_filter(const SubgraphBuilder& builder, const Node& node) {
  const Shape& b_shape = builder.shape(node.inputs[1]);
  const bool trans_b = node.attributes.get_int("transB", 0) != 0;
  const auto k = static_cast<std::size_t>(builder.shape(node.inputs[0])[1]);
  const auto n = static_cast<std::size_t>(trans_b ? b_shape[0] : b_shape[1]);
  const float alpha = node.attributes.get_float("alpha", 1.0f);
  const float* b = float_data(builder.graph(), node.inputs[1]);
  std::vector<float> filter(n * k);
  for (std::size_t row = 0; row < n; ++row) {
    for (std::size_t col = 0; col < k; ++col) {
      filter[row * k + col] = alpha * (trans_b ? b[row * k + col] : b[col * n + row]);
    }
  }
  return filter;
}

// beta * C for a Gemm whose C is added after the product, broadcast to the
// output (a constant re-laid out now, a computed C reshaped).
std::uint32_t gemm_addend(SubgraphBuilder& builder, const Node& node) {
  const ValueId c = node.inputs[2];
  const ValueId out = node.outputs[0];
  if (!builder.graph().value(c).is_constant()) {
    return builder.broadcast_operand(c, builder.shape(out), Layout::kPlain);
  }
  const float beta = node.attributes.get_float("beta", 1.0f);
  const Shape aligned = pad_to_rank(builder.shape(c), 2);
  const float* c_data = float_data(builder.graph(), c);
  std::vector<float> scaled(c_data, c_data + shape_numel(aligned));
  for (float& v : scaled) v *= beta;
  return builder.define_static(std::move(scaled), xnn_dims(aligned, Layout::kPlain));
}

}  // namespace

bool emit_gemm(SubgraphBuilder& builder, const Node& node) {
  const auto io = builder.bind_io(node, Layout::kPlain);
  if (!io) return false;
  const ValueId out = node.outputs[0];
  const auto n = static_cast<std::size_t>(builder.shape(out)[1]);
  const auto k = static_cast<std::size_t>(builder.shape(node.inputs[0])[1]);
  const std::uint32_t filter = builder.define_static(gemm_filter(builder, node), {n, k});
  if (filter == kInvalidId) return false;
  // A constant C that is the same for every row is the layer's bias; any
  // other C is added after it.
  const ValueId c = node.input(2);
  if (c == kNoValue) return fully_connected(builder, io->x, filter, kInvalidId, io->y);
  const Shape aligned = pad_to_rank(builder.shape(c), 2);
  if (builder.graph().value(c).is_constant() && aligned[0] == 1) {
    const float beta = node.attributes.get_float("beta", 1.0f);
    const float* c_data = float_data(builder.graph(), c);
    std::vector<float> bias(n);
    for (std::size_t col = 0; col < n; ++col) bias[col] = beta * c_data[aligned[1] == 1 ? 0 : col];
    const std::uint32_t bias_id = builder.define_static(std::move(bias), {n});
    if (bias_id == kInvalidId) return false;
    return fully_connected(builder, io->x, filter, bias_id, io->y);
  }
  const std::uint32_t product =
      builder.define_internal(xnn_dims(builder.shape(out), Layout::kPlain));
  if (product == kInvalidId) return false;
  if (!fully_connected(builder, io->x, filter, kInvalidId, product)) return false;
  const std::uint32_t addend = gemm_addend(builder, node);
  if (addend == kInvalidId) return false;
  return builder.check(
      xnn_define_add2(builder.subgraph(), kNoMin, kNoMax, product, addend, io->y, 0), "add");
}

bool emit_matmul(SubgraphBuilder& builder, const Node& node) {
  const Shape& b_shape = builder.shape(node.inputs[1]);
  const auto k = static_cast<std::size_t>(b_shape[0]);
  const auto n = static_cast<std::size_t>(b_shape[1]);
  const float* b = float_data(builder.graph(), node.inputs[1]);
  std::vector<float> filter(n * k);
  for (std::size_t row = 0; row < n; ++row) {
    for (std::size_t col = 0; col < k; ++col) filter[row * k + col] = b[col * n + row];
  }
  // A bias Add folded into the layer: the layer computes the Add's output.
  ValueId out = node.outputs[0];
  ValueId bias = kNoValue;
  if (const Node* add = builder.folded_node()) {
    bias = add->inputs[0] == out ? add->inputs[1] : add->inputs[0];
    out = add->outputs[0];
  }
  const auto io = builder.bind_io(node.inputs[0], out, Layout::kPlain);
  if (!io) return false;
  std::uint32_t bias_id = kInvalidId;
  if (bias != kNoValue) {
    const float* bias_data = float_data(builder.graph(), bias);
    bias_id = builder.define_static(std::vector<float>(bias_data, bias_data + n), {n});
    if (bias_id == kInvalidId) return false;
  }
  const std::uint32_t filter_id = builder.define_static(std::move(filter), {n, k});
  if (filter_id == kInvalidId) return false;
  return fully_connected(builder, io->x, filter_id, bias_id, io->y);
}

}  // namespace collage::xnnpack
