// OpTable: one row per op the XNNPACK backend runs.
//
// A row names the ONNX op types it covers and, for them, the support check
// (op_support.h, which decodes a node as its emitter does), how the op
// constrains the layouts of its 4-D values (LayoutPlan), the emitter that
// defines its XNNPACK subgraph nodes (emitters.h) and what the check
// requires, as `collage backends` prints it. The support predicate, the
// layout plan, the subgraph builder and that description all read these
// rows, so an op is added in one place.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collage/ir/graph.h"

namespace collage::xnnpack {

class SubgraphBuilder;

// How an op constrains the layouts of its 4-D values (see LayoutPlan).
enum class LayoutRule {
  // Input 0 and output 0 share a layout, whichever it is (elementwise ops, Pad).
  kFollowInput,
  // Every input of the output's rank shares the output's layout; lower-rank
  // inputs are broadcast into it (Add, Mul, Max, ...).
  kBroadcast,
  // Input 0 and output 0 must be channels-last (convolution, pooling).
  kChannelsLast,
  // Input 0 and output 0 must be plain (reshapes, fully connected).
  kPlain,
  // Shared layout, restricted to those where the axis maps onto XNNPACK's.
  kSoftmax,
  // Channels-last when 4-D (the slope is per channel), plain otherwise.
  kPrelu,
};

struct OpRow {
  std::vector<std::string_view> op_types;
  // Whether XNNPACK runs `node`, of one of op_types, as a partition of its own.
  bool (*check)(const Graph& graph, const Node& node);
  LayoutRule layout;
  // Defines the XNNPACK nodes of `node`, which check accepted; false, with
  // the failure recorded in `builder`, when XNNPACK refuses.
  bool (*emit)(SubgraphBuilder& builder, const Node& node);
  // What check requires beyond float32, for `collage backends`; empty when
  // nothing worth saying.
  std::string_view conditions;
};

// Every row; each op type is in one row.
const std::vector<OpRow>& op_table();

// The row of `op_type`; nullptr when XNNPACK does not run it.
const OpRow* find_op_row(std::string_view op_type);

// Whether the XNNPACK backend can run `node` of `graph` as a partition of its own.
bool supports_node(const Graph& graph, const Node& node);

// The op types supports_node can accept, sorted, each with its conditions:
// "Abs, Add, ..., Conv (2-D, constant weights; ...), ...".
std::string describe_ops();

// The layout rule of `node`'s row (kPlain for an op without one).
LayoutRule layout_rule(const Node& node);

}  // namespace collage::xnnpack
