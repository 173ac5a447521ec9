// Einsum lowered to Transpose, Reshape, ReduceSum and MatMul.
//
// No backend runs Einsum, but every one of them runs batched matrix
// products, and an Einsum is one (or a chain of them) between a few
// transposes and reshapes: an attention block's "bhid,bhjd->bhij" is a
// Transpose of the second operand and a MatMul. ONNX Runtime's CPU provider
// computes Einsum the same way. Lowering it at import, at every
// --graph-opt level, lets the search place those products like any other.
//
// Each Einsum becomes, per pair of operands from the left: a ReduceSum of
// the indices only that operand has and nothing after needs; a Transpose of
// each operand to [batch, free, contracted] and [batch, contracted, free];
// Reshapes that merge the free and the contracted indices; a MatMul; a
// Reshape back to one axis per index. A final ReduceSum and Transpose put
// the result in the output's order. Steps that would change nothing are
// left out.
//
// The equation follows ONNX: letters name indices, whitespace is ignored,
// "..." stands for the leading dimensions (broadcast like numpy's), and
// without "->" the output is the ellipsis, then the letters that appear
// once, in character order. A dimension of size 1 that another operand has
// larger broadcasts. What is not lowered raises an Error naming the node:
// an index repeated in one operand (a diagonal), a malformed equation,
// sizes that disagree. An Einsum with an empty operand is left as it is.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

// Lowers every Einsum whose input shapes are all known (the others are left
// for a later call, once type inference has settled them). Sorts the graph
// and prunes when anything changed. Returns how many were lowered.
int lower_einsums(Graph& graph);

}  // namespace collage
