// Folding BatchNormalization into the convolution before it.
//
// In inference, BatchNormalization is a per-channel affine map,
//   y = (x - mean) * scale / sqrt(var + epsilon) + B,
// and when x is a convolution's output (and nothing else reads x) the map
// can be applied to the convolution's weights and bias once, at import:
//   W'[oc] = W[oc] * s[oc],  b'[oc] = (b[oc] - mean[oc]) * s[oc] + B[oc],
// with s = scale / sqrt(var + epsilon). Exporters other than PyTorch's
// (PaddleOCR's models, for one) leave a BatchNormalization after every
// convolution; unfolded, each is a tiny memory-bound op that the search has
// to place, and that every backend runs as its own pass over the tensor.
// ONNX Runtime's and TVM's optimizers (SimplifyInference, FoldScaleAxis)
// do the same rewrite.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

// Folds every BatchNormalization whose input is the only use of a Conv's
// output (or of a ConvTranspose's with group 1) whose weights, bias and
// normalization parameters are float32 constants. The BatchNormalization's
// output value keeps its name. Returns the number folded.
int fold_batch_norm(Graph& graph);

}  // namespace collage
