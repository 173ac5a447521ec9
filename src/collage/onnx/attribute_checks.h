// Attribute checks that must pass before a node reaches ONNX shape inference
// or a kernel.
//
// ONNX's own inference divides by a convolution's or pooling window's strides
// without checking them (onnx::convPoolShapeInference in ONNX 1.12): a model
// with `strides = [0, 1]` would kill the process with SIGFPE. Kernels assume
// the same invariants (positive strides, dilations, kernel sizes and groups;
// non-negative pads). Checking them here, once, on the imported graph, turns
// such a model into an Error naming the node and the attribute.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

// Throws Error (node and attribute named) when a window op (Conv, ConvTranspose,
// the pools, ...) or a block op (DepthToSpace, SpaceToDepth) has attributes
// out of range: strides, dilations, kernel_shape, group and blocksize below 1,
// pads or output_padding below 0, any of them above 2^31 - 1, or lists whose
// lengths disagree with each other or with the input's spatial rank, and
// when a convolution's input and weight ranks differ (ONNX's inference reads
// out of bounds then).
void check_node_attributes(const Graph& graph);

}  // namespace collage
