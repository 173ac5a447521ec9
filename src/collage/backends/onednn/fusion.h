// Fusion: groups the partition's units into primitives with post-ops.
//
// A FusedOp is an anchor (a convolution, matmul, binary op or batch norm)
// followed by the chain of units oneDNN can apply to its result on the way
// out: activations, broadcast binary ops, a residual add (the sum post-op),
// and for convolutions and matmuls a constant per-channel Add taken as the
// primitive's bias. A channel Concat takes the BatchNormalization reading
// it and that one's Relu (concat.h, emit_normalized_concat). A unit joins the chain only when the
// value it extends has no other reader and is not a partition output, and when its other operand is
// ready before the anchor runs. Every other unit is a FusedOp of its own. Grouping never fails:
// whether a FusedOp can be emitted is decided when it is lowered, and a chain oneDNN declines is
// emitted unit by unit.
#pragma once

#include <optional>
#include <vector>

#include "collage/backends/onednn/post_ops.h"
#include "collage/backends/onednn/units.h"
#include "collage/ir/graph.h"

namespace collage::onednn {

struct FusedStep {
  Unit unit;
  // What the unit becomes as post-ops (a reversed Sub is two).
  std::vector<PostOp> ops;
};

struct FusedOp {
  Unit anchor;
  // An Add of a constant folded into the anchor's bias, and that constant.
  std::optional<Unit> bias_add;
  ValueId bias = kNoValue;
  std::vector<FusedStep> post;

  // The value the anchor's primitive produces before post-ops.
  ValueId anchor_output() const { return bias_add ? bias_add->output : anchor.output; }
  // The value the whole chain produces.
  ValueId output() const { return post.empty() ? anchor_output() : post.back().unit.output; }
  // The post-op groups of `post` with the values they define.
  PostOpChain chain() const;
};

// Groups `units` (from build_units) into FusedOps, in an order that is safe
// to emit.
std::vector<FusedOp> fuse_units(const Graph& graph, const std::vector<Unit>& units);

}  // namespace collage::onednn
