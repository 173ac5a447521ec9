#include "collage/onnx/attribute_checks.h"

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <set>
#include <string_view>

#include "collage/ir/error.h"
#include "collage/ir/passes/partial_type.h"

namespace collage {
namespace {

// Far above any real window, far below where (kernel - 1) * dilation + pads
// could overflow int64.
constexpr std::int64_t kMaxWindowValue = std::numeric_limits<std::int32_t>::max();

const std::set<std::string_view, std::less<>> kWindowOps = {
    "AveragePool", "Conv",    "ConvInteger", "ConvTranspose",
    "LpPool",      "MaxPool", "MaxUnpool",   "QLinearConv",
};
const std::set<std::string_view, std::less<>> kGroupedOps = {"Conv", "ConvInteger", "ConvTranspose",
                                                             "QLinearConv"};
const std::set<std::string_view, std::less<>> kBlockOps = {"DepthToSpace", "SpaceToDepth"};

Error attribute_error(const Node& node, const std::string& attribute, const std::string& message) {
  return Error(message, {.node = node.name, .field = "attribute '" + attribute + "'"});
}

void check_range(const Node& node, const std::string& attribute, std::int64_t value,
                 std::int64_t minimum) {
  if (value >= minimum && value <= kMaxWindowValue) return;
  throw attribute_error(node, attribute,
                        value < minimum
                            ? fmt::format("{} must be at least {}", value, minimum)
                            : fmt::format("{} is larger than {}", value, kMaxWindowValue));
}

// Checks every element of an ints attribute, when present; returns its length
// (or -1 when absent).
std::int64_t check_ints(const Node& node, const std::string& attribute, std::int64_t minimum) {
  if (!node.attributes.has(attribute)) return -1;
  const std::vector<std::int64_t>& values = node.attributes.get_ints(attribute);
  for (std::int64_t value : values) check_range(node, attribute, value, minimum);
  return static_cast<std::int64_t>(values.size());
}

// The index of the weight input of a convolution, or -1 for pools.
int weight_input(const Node& node) {
  if (node.op_type == "QLinearConv") return 3;
  return kGroupedOps.count(node.op_type) != 0 ? 1 : -1;
}

void check_window(const Graph& graph, const Node& node) {
  const std::int64_t kernel = check_ints(node, "kernel_shape", 1);
  const std::int64_t strides = check_ints(node, "strides", 1);
  const std::int64_t dilations = check_ints(node, "dilations", 1);
  const std::int64_t pads = check_ints(node, "pads", 0);
  const std::int64_t output_padding = check_ints(node, "output_padding", 0);
  const std::int64_t output_shape = check_ints(node, "output_shape", 0);
  if (kGroupedOps.count(node.op_type) != 0 && node.attributes.has("group")) {
    check_range(node, "group", node.attributes.get_int("group"), 1);
  }
  // ONNX's inference indexes the input's spatial dimensions with the
  // kernel's (from kernel_shape or the weight's shape) without comparing
  // their counts (a Conv of a rank-3 input with a rank-4 weight read past
  // the end): every spatial rank must agree. The input's rank decides when
  // it is known, else kernel_shape's.
  std::int64_t rank = kernel >= 0 ? kernel : strides >= 0 ? strides : dilations;
  std::string source = "kernel_shape";
  if (!node.inputs.empty() && node.input(0) != kNoValue) {
    const TensorType& x = graph.type(node.input(0));
    if (has_known_rank(x)) {
      if (x.rank() < 3) {
        throw Error(fmt::format("input 0 has rank {}; it needs at least 3 (batch, channels and "
                                "spatial dimensions)",
                                x.rank()),
                    {.node = node.name});
      }
      rank = x.rank() - 2;
      source = "input 0";
    }
  }
  const int w = weight_input(node);
  if (rank >= 0 && w >= 0 && static_cast<std::size_t>(w) < node.inputs.size() &&
      node.input(w) != kNoValue) {
    const TensorType& weight = graph.type(node.input(w));
    if (has_known_rank(weight) && weight.rank() != rank + 2) {
      throw Error(fmt::format("the weight (input {}) has rank {}, the {} needs rank {}", w,
                              weight.rank(), source, rank + 2),
                  {.node = node.name});
    }
  }
  auto same_rank = [&](const std::string& attribute, std::int64_t length, std::int64_t expected) {
    if (length < 0 || rank < 0 || length == expected) return;
    throw attribute_error(node, attribute,
                          fmt::format("has {} values, expected {}", length, expected));
  };
  same_rank("kernel_shape", kernel, rank);
  same_rank("strides", strides, rank);
  same_rank("dilations", dilations, rank);
  same_rank("pads", pads, 2 * rank);
  same_rank("output_padding", output_padding, rank);
  same_rank("output_shape", output_shape, rank);
}

}  // namespace

void check_node_attributes(const Graph& graph) {
  for (const Node& node : graph.nodes()) {
    if (!node.domain.empty()) continue;
    if (kWindowOps.count(node.op_type) != 0) check_window(graph, node);
    if (kBlockOps.count(node.op_type) != 0 && node.attributes.has("blocksize")) {
      check_range(node, "blocksize", node.attributes.get_int("blocksize"), 1);
    }
  }
}

}  // namespace collage
