// Folding per-channel scales and shifts into the weights before them.
//
// A BatchNormalization in inference, and a Mul, Div, Add or Sub by a constant
// that varies at most along the channels, are per-channel affine maps
//   y[c] = x[c] * s[c] + t[c].
// When x is the output of a Conv (or ConvTranspose with group 1, or a Gemm)
// and nothing else reads x, the map can be applied once, at import, to the
// producer's weights and bias:
//   W'[c] = W[c] * s[c],  b'[c] = b[c] * s[c] + t[c].
// A MatMul by a constant matrix absorbs pure scales (t = 0) into its columns.
// Exporters other than PyTorch's (PaddleOCR's models, for one) leave a
// BatchNormalization after every convolution, and some models scale by a
// constant after a layer; unfolded, each is a tiny memory-bound op that the
// search has to place and every backend runs as its own pass over the
// tensor. ONNX Runtime's Conv*Fusion and TVM's SimplifyInference and
// FoldScaleAxis make the same rewrites.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

struct ChannelAffineFolds {
  int batch_norms = 0;
  // Mul and Div by a per-channel constant.
  int scales = 0;
  // Add and Sub of a per-channel constant.
  int shifts = 0;

  int total() const { return batch_norms + scales + shifts; }
};

// Folds, until none is left, every per-channel affine node whose data input
// is read only by it and is defined by a Conv, a ConvTranspose with group 1
// or a Gemm (or, for scales, a MatMul by a 2-D constant), with float32
// constant weights. The affine node's output keeps its name. Prunes the
// graph when anything folded (value and node ids change).
ChannelAffineFolds fold_channel_affine(Graph& graph);

}  // namespace collage
