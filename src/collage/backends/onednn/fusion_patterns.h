// FusionPatterns: the multi-op entries the oneDNN backend offers the partitioner.
//
// Each entry is a chain the lowering fuses into one primitive: a
// convolution or matmul with its bias, a residual add (sum post-op) and an
// activation; a binary op with an activation; batch norm with Relu; and the
// erf-based GELU idiom. Matching from every node as a root yields every
// prefix of a chain as its own candidate, so the search can weigh them.
#pragma once

#include <vector>

#include "collage/backends/backend.h"

namespace collage::onednn {

std::vector<NamedPattern> fusion_patterns();

}  // namespace collage::onednn
