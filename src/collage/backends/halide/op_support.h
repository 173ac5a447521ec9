// Op support: which nodes the halide backend runs.
//
// A node is supported when it is in the ONNX domain, its data inputs and
// its outputs are float32 with static shapes (Halide indexes with 32-bit
// integers), its op has a row in the op table (op_table.h), and it passes
// that row's check below. The lowering handles exactly the nodes these
// accept.
#pragma once

#include <string>
#include <vector>

#include "collage/ir/graph.h"

namespace collage::halide {

// Whether the halide backend can run `node` of `graph`.
bool supports_node(const Graph& graph, const Node& node);

// The ops the lowering handles, sorted.
std::vector<std::string> supported_ops();

// The ops the lowering handles, sorted, each with what its check requires
// (the op table's conditions), for `collage backends`: "Abs, Add, ...,
// Conv (2-D, constant weights; ...), ...".
std::string describe_ops();

// ---- the op table's checks, given float32 data and static shapes

// Unary elementwise ops: the output has the input's shape.
bool unary_supported(const Graph& graph, const Node& node);
// Clip: constant scalar bounds (or none), the output of the input's shape.
bool clip_supported(const Graph& graph, const Node& node);
// Binary elementwise ops: two inputs, each of rank at most the output's.
bool binary_supported(const Graph& graph, const Node& node);
// Conv: 2-D with constant weights (and bias), grouped or depthwise, or dense
// with at most 27 input-channel x kernel taps (a stem over three channels);
// dense ones with long reductions are GEMMs, left to the libraries.
bool conv_supported(const Graph& graph, const Node& node);
// MaxPool, AveragePool: 2-D, one output, row-major storage order.
bool pool_supported(const Graph& graph, const Node& node);
// Global pools: at least one spatial dimension.
bool global_pool_supported(const Graph& graph, const Node& node);
// Reduce*: constant axes in range; no empty axes with noop_with_empty_axes.
bool reduce_supported(const Graph& graph, const Node& node);
// MatMul: small products (a reduction of at most 256, at most 4M
// multiply-adds), such as attention scores over a head.
bool matmul_supported(const Graph& graph, const Node& node);
// Gemm: 2-D, and as small as MatMul (squeeze-and-excitation's dense layers).
bool gemm_supported(const Graph& graph, const Node& node);
// Softmax: per axis (opset 13), or on the last axis before it.
bool softmax_supported(const Graph& graph, const Node& node);
// LayerNormalization: only the normalized output, float32 statistics.
bool layer_norm_supported(const Graph& graph, const Node& node);
// BatchNormalization: inference, 1-D parameters, one output.
bool batch_norm_supported(const Graph& graph, const Node& node);
// Ops with no conditions beyond the op type (reshapes, Transpose, Concat, Split).
bool always_supported(const Graph& graph, const Node& node);
// Slice: constant starts, ends, axes and steps.
bool slice_supported(const Graph& graph, const Node& node);
// Pad: constant, edge and reflect modes with constant pads (non-negative
// outside constant mode) and a constant scalar fill.
bool pad_supported(const Graph& graph, const Node& node);

}  // namespace collage::halide
