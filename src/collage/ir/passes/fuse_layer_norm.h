// The LayerNorm chain becomes ONNX's LayerNormalization.
//
// Before opset 17 exporters write layer normalization over the last axes as
//   m = ReduceMean(x)   d = x - m   v = ReduceMean(d^2)
//   y = d / sqrt(v + epsilon) * gamma + beta
// (PyTorch's nn.LayerNorm at opset 16 and below; d^2 as Pow(d, 2) or d * d;
// gamma and beta optional). That is nine ops, six passes over the tensor and
// five temporaries; every transformer block has two of them. As one
// LayerNormalization (opset 17) it is one op that oneDNN and the native
// backend each run in a single pass per row. ONNX Runtime's
// LayerNormFusion makes the same rewrite.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

// Rewrites every such chain over trailing axes of a float32 tensor, with a
// scalar constant epsilon and constant gamma and beta that vary only along
// the normalized axes, into LayerNormalization(x, gamma, beta). Prunes when
// anything changed. Returns the count.
int fuse_layer_norm(Graph& graph);

}  // namespace collage
