// FLOPs and parameter counts: how much work a model is, for `collage info`.
//
// Counts are static estimates from the op types and shapes, the way model
// zoos report them: a multiply-accumulate is 2 FLOPs (Conv, ConvTranspose,
// Gemm, MatMul), an elementwise op is one FLOP per output element, pooling
// and reductions one per element read, and data movement (Reshape,
// Transpose, Concat, Gather, ...) is free. They say how big a model is, not
// how fast it will run.
#pragma once

#include <cstdint>

#include "collage/ir/graph.h"

namespace collage {

// Estimated floating-point operations of one node. Throws Error naming the
// node when the count overflows int64.
std::int64_t node_flops(const Graph& graph, const Node& node);

// The sum of node_flops over all nodes.
std::int64_t graph_flops(const Graph& graph);

// Elements of the floating-point and 8-bit constants (weights, biases,
// norms' scales, quantized weights and their zero points) and of the int32
// biases of quantized products.
std::int64_t parameter_count(const Graph& graph);

}  // namespace collage
