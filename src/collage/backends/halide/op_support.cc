#include "collage/backends/halide/op_support.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "collage/backends/halide/constants.h"
#include "collage/backends/halide/op_table.h"
#include "collage/backends/op_rows.h"
#include "collage/ir/error.h"
#include "collage/ir/window.h"

namespace collage::halide {
namespace {

// The largest dense convolution (input channels x kernel taps) and matrix
// product (reduction length; multiply-adds) the backend takes.
constexpr std::int64_t kMaxDenseTaps = 27;
constexpr std::int64_t kMaxProductDepth = 256;
constexpr std::int64_t kMaxProductWork = std::int64_t{1} << 22;

// Halide indexes with 32-bit integers.
constexpr std::int64_t kMaxElements = std::numeric_limits<std::int32_t>::max() / 2;

bool is_float_value(const Graph& graph, ValueId id) {
  return id != kNoValue && graph.type(id).dtype == DType::kFloat32;
}

bool static_shape(const TensorType& type) {
  std::int64_t elements = 1;
  for (std::int64_t d : type.shape) {
    if (d <= 0 || d > kMaxElements) return false;
    elements *= d;
    if (elements > kMaxElements) return false;
  }
  return true;
}

const Shape& in_shape(const Graph& graph, const Node& node, std::size_t i) {
  return graph.type(node.input(i)).shape;
}

const Shape& out_shape(const Graph& graph, const Node& node) {
  return graph.type(node.outputs[0]).shape;
}

int rank_of(const Graph& graph, const Node& node, std::size_t i) {
  return static_cast<int>(in_shape(graph, node, i).size());
}

bool is_const(const Graph& graph, const Node& node, std::size_t i) {
  return constant_of(graph, node.input(i)) != nullptr;
}

bool window_ok(const Graph& graph, const Node& node, const Shape& kernel) {
  const Shape& xs = graph.type(node.input(0)).shape;
  if (xs.size() < 3 || xs.size() > 5) return false;
  return forward_window(node, Shape(xs.begin() + 2, xs.end()), kernel).ok();
}

// Small matrix products (attention scores over a head, squeeze-and-
// excitation's dense layers); the large ones belong to the GEMM libraries.
bool small_product(const Graph& graph, const Node& node, std::int64_t k) {
  std::int64_t outputs = 1;
  for (std::int64_t d : out_shape(graph, node)) outputs *= d;
  return k <= kMaxProductDepth && outputs * k <= kMaxProductWork;
}

}  // namespace

bool supports_node(const Graph& graph, const Node& node) {
  if (!node.domain.empty()) return false;
  const OpRow* row = find_op_row(node.op_type);
  if (row == nullptr) return false;
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId id = node.inputs[i];
    if (id == kNoValue) continue;
    if (is_parameter_input(*row, i)) continue;
    if (!is_float_value(graph, id) || !static_shape(graph.type(id))) return false;
  }
  if (node.outputs.empty()) return false;
  for (ValueId id : node.outputs) {
    if (id == kNoValue) continue;
    if (!is_float_value(graph, id) || !static_shape(graph.type(id))) return false;
  }
  try {
    return row->check(graph, node);
  } catch (const Error&) {
    // An attribute of the wrong kind: not this backend's to run.
    return false;
  }
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> ops;
  for (const OpRow& row : op_table())
    ops.insert(ops.end(), row.op_types.begin(), row.op_types.end());
  std::sort(ops.begin(), ops.end());
  return ops;
}

std::string describe_ops() { return describe_op_rows(op_table()); }

bool unary_supported(const Graph& graph, const Node& node) {
  return in_shape(graph, node, 0) == out_shape(graph, node);
}

bool clip_supported(const Graph& graph, const Node& node) {
  for (std::size_t i = 1; i < node.inputs.size(); ++i) {
    if (node.input(i) != kNoValue && !constant_scalar(graph, node.input(i))) return false;
  }
  return unary_supported(graph, node);
}

bool binary_supported(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 2) return false;
  const int out_rank = static_cast<int>(out_shape(graph, node).size());
  return out_rank >= rank_of(graph, node, 0) && out_rank >= rank_of(graph, node, 1);
}

bool conv_supported(const Graph& graph, const Node& node) {
  if (rank_of(graph, node, 0) != 4 || !is_const(graph, node, 1)) return false;
  if (node.input(2) != kNoValue && !is_const(graph, node, 2)) return false;
  const Shape& ws = in_shape(graph, node, 1);
  const std::int64_t group = node.attributes.get_int("group", 1);
  if (group < 1 || in_shape(graph, node, 0)[1] != ws[1] * group ||
      out_shape(graph, node)[1] % group != 0) {
    return false;
  }
  // Depthwise and grouped convolutions, and small dense ones (a stem over
  // three channels): dense ones with long reductions are GEMMs, which
  // the libraries block for cache and registers.
  const std::int64_t taps = ws[1] * ws[2] * ws[3];
  if (group == 1 && taps > kMaxDenseTaps) return false;
  return window_ok(graph, node, Shape(ws.begin() + 2, ws.end()));
}

bool pool_supported(const Graph& graph, const Node& node) {
  if (rank_of(graph, node, 0) != 4 || node.outputs.size() > 1 ||
      !node.attributes.has("kernel_shape")) {
    return false;
  }
  if (node.attributes.get_int("storage_order", 0) != 0) return false;
  return window_ok(graph, node, node.attributes.get_ints("kernel_shape"));
}

bool global_pool_supported(const Graph& graph, const Node& node) {
  return rank_of(graph, node, 0) >= 3;
}

bool reduce_supported(const Graph& graph, const Node& node) {
  if (node.input(1) != kNoValue && !constant_ints(graph, node.input(1))) return false;
  std::vector<std::int64_t> axes;
  if (auto given = constant_ints(graph, node.input(1))) axes = *given;
  if (node.attributes.has("axes")) axes = node.attributes.get_ints("axes");
  if (axes.empty() && node.attributes.get_int("noop_with_empty_axes", 0) != 0) return false;
  for (std::int64_t a : axes) {
    if (a < -rank_of(graph, node, 0) || a >= rank_of(graph, node, 0)) return false;
  }
  return true;
}

bool matmul_supported(const Graph& graph, const Node& node) {
  if (rank_of(graph, node, 0) < 2 || rank_of(graph, node, 1) < 2) return false;
  const Shape& a = in_shape(graph, node, 0);
  const Shape& b = in_shape(graph, node, 1);
  return a.back() == b[b.size() - 2] && small_product(graph, node, a.back());
}

bool gemm_supported(const Graph& graph, const Node& node) {
  if (rank_of(graph, node, 0) != 2 || rank_of(graph, node, 1) != 2 ||
      (node.input(2) != kNoValue && rank_of(graph, node, 2) > 2)) {
    return false;
  }
  const Shape& a = in_shape(graph, node, 0);
  return small_product(graph, node, node.attributes.get_int("transA", 0) != 0 ? a[0] : a[1]);
}

bool softmax_supported(const Graph& graph, const Node& node) {
  // Opset 13's per-axis Softmax; earlier opsets agree with it on the last axis.
  const std::int64_t axis = node.attributes.get_int("axis", -1);
  if (graph.opset >= 13) return true;
  const int rank = rank_of(graph, node, 0);
  return normalized_axis(axis, rank) == rank - 1;
}

bool layer_norm_supported(const Graph&, const Node& node) {
  for (std::size_t k = 1; k < node.outputs.size(); ++k) {
    if (node.outputs[k] != kNoValue) return false;
  }
  return node.attributes.get_int("stash_type", 1) == 1;
}

bool batch_norm_supported(const Graph& graph, const Node& node) {
  if (node.outputs.size() > 1 || rank_of(graph, node, 0) < 2) return false;
  for (std::size_t i = 1; i < 5; ++i) {
    if (node.input(i) == kNoValue || in_shape(graph, node, i).size() != 1) return false;
  }
  return node.attributes.get_int("training_mode", 0) == 0;
}

bool always_supported(const Graph&, const Node&) { return true; }

bool slice_supported(const Graph& graph, const Node& node) {
  for (std::size_t i = 1; i < node.inputs.size(); ++i) {
    if (node.input(i) != kNoValue && !constant_ints(graph, node.input(i))) return false;
  }
  return node.input(1) != kNoValue && node.input(2) != kNoValue;
}

bool pad_supported(const Graph& graph, const Node& node) {
  const std::string mode = node.attributes.get_string("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect") return false;
  if (graph.opset < 11) return true;
  auto pads = constant_ints(graph, node.input(1));
  if (!pads || pads->size() != 2 * static_cast<std::size_t>(rank_of(graph, node, 0))) return false;
  if (node.input(2) != kNoValue && !constant_scalar(graph, node.input(2))) return false;
  if (node.input(3) != kNoValue) return false;
  if (mode == "constant") return true;
  return std::all_of(pads->begin(), pads->end(), [](std::int64_t p) { return p >= 0; });
}

}  // namespace collage::halide
