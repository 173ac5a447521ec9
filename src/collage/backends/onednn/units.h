// Units: the partition's nodes as the operations oneDNN sees.
//
// Mostly one node is one unit. Some multi-node idioms are a single oneDNN
// operation: the erf-based GELU that exporters spell as five nodes
// (x * 0.5 * (1 + erf(x / sqrt(2))), in its common orders) is one gelu_erf
// eltwise. Recognizing those first lets fusion and lowering treat them like
// any other op.
#pragma once

#include <string>
#include <vector>

#include "collage/ir/graph.h"

namespace collage::onednn {

struct Unit {
  enum class Kind { kNode, kGeluErf };

  Kind kind = Kind::kNode;
  // The node itself, or the last node of a recognized idiom.
  NodeId node = kNoNode;
  // Every node the unit covers, in graph order.
  std::vector<NodeId> nodes;
  // The values the unit reads from outside itself (constants included).
  std::vector<ValueId> inputs;
  ValueId output = kNoValue;
};

// The partition as units, in a topological order (by their last node).
// Every node belongs to exactly one unit.
std::vector<Unit> build_units(const Graph& graph);

// If `erf` (an Erf node) is the core of an erf-based GELU whose inner values
// are used nowhere else, the GELU's nodes and its input; else nullopt.
// `consumers` is graph.consumers().
struct GeluMatch {
  std::vector<NodeId> nodes;
  ValueId input = kNoValue;
  ValueId output = kNoValue;
};
std::optional<GeluMatch> match_gelu_erf(const Graph& graph, NodeId erf,
                                        const std::vector<std::vector<NodeId>>& consumers);

}  // namespace collage::onednn
