#include "collage/onnx/attribute_checks.h"

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <set>
#include <string_view>

#include "collage/ir/error.h"

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

void check_window(const Node& node) {
  const std::int64_t kernel = check_ints(node, "kernel_shape", 1);
  const std::int64_t strides = check_ints(node, "strides", 1);
  const std::int64_t dilations = check_ints(node, "dilations", 1);
  const std::int64_t pads = check_ints(node, "pads", 0);
  check_ints(node, "output_padding", 0);
  if (node.attributes.has("output_shape")) check_ints(node, "output_shape", 0);
  // The spatial rank every list must agree on: kernel_shape's when given.
  std::int64_t rank = kernel >= 0 ? kernel : strides >= 0 ? strides : dilations;
  auto same_rank = [&](const std::string& attribute, std::int64_t length, std::int64_t expected) {
    if (length < 0 || rank < 0 || length == expected) return;
    throw attribute_error(node, attribute,
                          fmt::format("has {} values, expected {}", length, expected));
  };
  same_rank("strides", strides, rank);
  same_rank("dilations", dilations, rank);
  same_rank("pads", pads, 2 * rank);
  if (kGroupedOps.count(node.op_type) != 0 && node.attributes.has("group")) {
    check_range(node, "group", node.attributes.get_int("group"), 1);
  }
}

}  // namespace

void check_node_attributes(const Graph& graph) {
  for (const Node& node : graph.nodes()) {
    if (!node.domain.empty()) continue;
    if (kWindowOps.count(node.op_type) != 0) check_window(node);
    if (kBlockOps.count(node.op_type) != 0 && node.attributes.has("blocksize")) {
      check_range(node, "blocksize", node.attributes.get_int("blocksize"), 1);
    }
  }
}

}  // namespace collage
