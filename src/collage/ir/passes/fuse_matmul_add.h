// MatMul followed by Add of a constant bias becomes one Gemm.
//
// PyTorch exports a Linear layer on a 2-D input as Gemm, but on an input
// that was reshaped or transposed on the way (and in many other exporters'
// output) as MatMul then Add. Gemm carries the bias into the GEMM call
// itself (oneDNN's and OpenBLAS's kernels add it while the tile is in
// registers) and is one node less for the search to place. ONNX Runtime's
// MatMulAddFusion makes the same rewrite. On inputs of rank > 2 the pair is
// left as it is: ONNX has no batched GEMM with bias, and the backends that
// fuse MatMul with an Add after it (oneDNN's binary post-op, OpenBLAS's
// epilogue) already do so.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

// Rewrites each MatMul of two rank-2 inputs whose output is read only by an
// Add of a constant that broadcasts to the product's shape into a Gemm
// writing the Add's output. Prunes when anything changed. Returns the count.
int fuse_matmul_add(Graph& graph);

}  // namespace collage
