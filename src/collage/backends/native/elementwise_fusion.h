// Elementwise fusion: a tree of float32 elementwise ops as one loop.
//
// Chains such as Add+Relu, Mul+Sigmoid (SiLU) or the five ops of PyTorch's
// exported GELU are memory-bound: run op by op, each reads and writes a
// whole tensor. Fused, one loop walks the output once, reads each leaf input
// with its own broadcasting, and keeps intermediates in a small per-thread
// block that stays in L1. The loop evaluates a block of outputs op by op
// through the same block functions the unfused kernels use
// (elementwise_math.h), so fused and unfused results are identical.
//
// A FusionGroup is found backwards from a root: a producer joins its
// consumer's group when it is a fusable float32 elementwise op, its output is
// not a graph output, and every consumer of that output is already in the
// group. Groups are therefore single-output and convex, and an intermediate
// read twice inside the group (x in x * sigmoid(x) after a producer) is
// still computed once per block.
#pragma once

#include <span>
#include <vector>

#include "collage/backends/backend.h"
#include "collage/backends/native/broadcast.h"
#include "collage/backends/native/elementwise_math.h"
#include "collage/ir/graph.h"

namespace collage::native {

struct FusionGroup {
  // In graph (topological) order; the last node is the root.
  std::vector<NodeId> nodes;
  // The values the group reads from outside it, in order of first use.
  std::vector<ValueId> leaves;
  // The root's output: the only value the group defines for the outside.
  ValueId output = kNoValue;
};

// The fusion groups of `graph`: every node that float_elementwise_fn
// describes lies in exactly one group (possibly alone); other nodes lie in
// none. Groups come in the order of their roots.
std::vector<FusionGroup> find_fusion_groups(const Graph& graph);

// A compiled fusion group: runs the group's ops over its leaves in one loop.
class ElementwiseProgram {
 public:
  // An operand of a step: a leaf input, or the result of an earlier step.
  struct Operand {
    bool is_leaf = true;
    int index = 0;
  };
  struct Step {
    ElementwiseFn fn;
    std::vector<Operand> operands;
  };

  // `steps` in evaluation order; the last one produces the output.
  // `leaf_shapes` must each broadcast to `output_shape`.
  ElementwiseProgram(Shape output_shape, std::vector<Shape> leaf_shapes, std::vector<Step> steps);

  // Compiles `group` of `graph`, its values stored in `layout` where they
  // are laid out (layout_ops.h). Throws Error when a node's output shape is
  // not the broadcast of its inputs' shapes.
  static ElementwiseProgram compile(const Graph& graph, const FusionGroup& group,
                                    EdgeLayout layout = EdgeLayout::kPlain);

  // Evaluates into `output` (float32, of output_shape's size) from `leaves`
  // (float32, in the order of leaf_shapes).
  void run(std::span<const Tensor> leaves, Tensor& output, int threads) const;

  std::size_t num_steps() const { return steps_.size(); }

 private:
  Shape output_shape_;
  std::vector<Shape> leaf_shapes_;
  std::vector<Step> steps_;
  BroadcastPlan plan_;
  // Where the plan's inner runs are short (a per-channel operand over a
  // blocked or channels-last output: runs of one block of lanes), the last
  // two dims merged into one, each leaf walking it contiguously, as a
  // constant, or periodically: period_ floats that repeat (merge_periodic).
  // Empty leaf flags when the runs are long enough as they are.
  std::vector<bool> periodic_;
  std::int64_t period_ = 0;
};

}  // namespace collage::native
