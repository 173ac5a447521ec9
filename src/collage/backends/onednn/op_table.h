// OpTable: one row per op family the oneDNN backend runs.
//
// A row names the ONNX op types of a family, checks a node by decoding it
// into the spec its primitive builder consumes (a node is supported exactly
// when that decoding succeeds), and emits the node's primitive with as many
// of its fused post-ops as the primitive takes. The support predicate, the
// description `collage backends` prints and the lowering all read these
// rows, so an op is added in one place.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collage/backends/onednn/fusion.h"
#include "collage/backends/onednn/program.h"
#include "collage/ir/graph.h"

namespace collage::onednn {

struct OpRow {
  std::vector<std::string> op_types;
  // nullopt when oneDNN runs `node` on its own; else why not.
  std::optional<std::string> (*check)(const Graph& graph, const Node& node);
  // Emits `op`, whose anchor is a node of this family, with as many of its
  // post-op groups as the primitive fuses; returns how many (the caller
  // emits the rest one by one). Throws LoweringError for a node it cannot run.
  std::size_t (*emit)(ProgramBuilder& builder, const FusedOp& op, const Node& node);
};

// Every family, in the order `collage backends` lists them.
const std::vector<OpRow>& op_table();

// The row of `op_type`; nullptr when oneDNN has no primitive for it.
const OpRow* find_op_row(std::string_view op_type);

}  // namespace collage::onednn
