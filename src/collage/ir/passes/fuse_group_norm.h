// The GroupNorm chain becomes ONNX's GroupNormalization.
//
// Before opset 18 exporters write group normalization of x [N, C, ...]
// with G groups as an instance normalization of the groups:
//   g = Reshape(x, [N, G, -1])
//   n = InstanceNormalization(g, ones(G), zeros(G))
//   y = Reshape(n, Shape(x)) * gamma + beta        (gamma, beta per channel)
// (PyTorch's nn.GroupNorm at opset 17 and below; U-Nets and diffusion
// models have one before every convolution.) That is two copies, one
// normalization and two passes for the affine, in three partitions of
// plain layout between convolutions that compute blocked. As one
// GroupNormalization it is one op with one pass for the statistics and one
// for the result, which the native backend runs in the layout the
// convolutions leave (backends/native/layout_ops.h).
//
// The fused op has the semantics of opset 21: scale and bias per channel
// (opset 18's per group was deprecated for it). Like the fused activations
// (fuse_activations.h), the canonical graph may hold it whatever the model's
// opset; a model's own GroupNormalization is expanded at import
// (onnx/opset_conversion.h).
#pragma once

#include "collage/ir/graph.h"

namespace collage {

// Rewrites every such chain over a float32 x of rank 3 or more and known
// shape whose channels divide into the groups, with constant reshape
// targets, constant instance-normalization scale and bias, and a following
// Mul and Add by per-channel constants where there are (each read by
// nothing else), into GroupNormalization(x, scale, bias) with `num_groups`
// and `epsilon`. Prunes when anything changed. Returns the count.
int fuse_group_norm(Graph& graph);

}  // namespace collage
