// The oneDNN backend: Intel's deep-learning primitives library (oneDNN 2.x)
// as a library-style backend.
//
// It runs convolutions (transposed too), matmul/Gemm, pooling, batch and
// layer normalization, softmax, binary and eltwise ops, and offers fusion
// patterns (conv+bias+add+relu, matmul+bias+gelu, ...) that become one
// primitive with post-ops. A partition becomes a chain of primitives that
// keeps oneDNN's blocked layouts between them and converts only at its
// edges; constant weights are reordered once, at compile time.
#pragma once

#include <memory>

#include "collage/backends/backend.h"

namespace collage {

std::unique_ptr<Backend> make_onednn_backend();

}  // namespace collage
