// Activation functions written as chains of elementwise ops become one op.
//
// Exporters spell activations out when the target opset has no op for them
// (ONNX got Gelu in opset 20 and Swish in opset 24) or when the model writes
// the formula by hand:
//   Gelu (erf):   x * 0.5 * (1 + erf(x / sqrt(2)))
//   Gelu (tanh):  x * 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
//   Swish:        x * sigmoid(alpha * x)              (SiLU: alpha = 1)
//   HardSigmoid:  clip(x + b, 0, m) / m               (alpha = 1/m, beta = b/m)
//   HardSwish:    x * HardSigmoid(x) with alpha 1/6 and beta 1/2,
//                 or x * clip(x + 3, 0, 6) / 6
// Each chain is five to ten memory-bound passes over the tensor; as one op it
// is one pass, and a library can apply it as a post-op of the convolution or
// matrix product before it (oneDNN's eltwise gelu, swish and hardswish). The
// fused ops are ONNX's own, with ONNX's semantics: Gelu (opset 20, attribute
// `approximate`), Swish (opset 24, attribute `alpha`), HardSigmoid and
// HardSwish; the canonical graph may hold them whatever the model's opset.
// The chains' products may come in any order and grouping of Mul nodes
// (and a Div by a constant for a factor), and the constants within a
// relative 1e-4 of their exact values.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

// Each rewrites the chains it recognizes in place, prunes what they leave
// dead, and returns how many it rewrote. Run fuse_hard_sigmoid before
// fuse_hard_swish: the first HardSwish form builds on HardSigmoid.
int fuse_gelu(Graph& graph);
int fuse_swish(Graph& graph);
int fuse_hard_sigmoid(Graph& graph);
int fuse_hard_swish(Graph& graph);

}  // namespace collage
