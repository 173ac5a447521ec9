// OpEvaluator: computes one node's outputs from constant inputs.
//
// The canonicalization passes fold constant sub-graphs, which needs kernels;
// kernels live in a higher layer (backends/native). The passes take this
// interface instead, and the tool hands them the native implementation.
#pragma once

#include <span>
#include <vector>

#include "collage/ir/graph.h"

namespace collage {

class OpEvaluator {
 public:
  virtual ~OpEvaluator() = default;
  // Whether evaluate() can compute `node` (op supported, types known).
  virtual bool can_evaluate(const Graph& graph, const Node& node) const = 0;
  // Outputs of `node` for the given inputs (kNoValue inputs come as empty
  // tensors), with the types graph.type(node.outputs[i]).
  virtual std::vector<Tensor> evaluate(const Graph& graph, const Node& node,
                                       std::span<const Tensor> inputs) const = 0;
};

}  // namespace collage
