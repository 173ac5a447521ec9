// Lowering: a partition Graph to a Program of oneDNN primitives.
//
// The partition's nodes are grouped into units (recognizing multi-node
// idioms such as the erf GELU), units into fused primitives with post-ops,
// and each fused primitive is emitted through its family's builder. Values
// stay in oneDNN's layouts between primitives; ProgramBuilder reorders only
// at the partition's edges and where a consumer needs another layout.
#pragma once

#include <dnnl.hpp>

#include "collage/backends/onednn/program.h"
#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::onednn {

// The program computing `partition`'s outputs from its inputs, or why oneDNN
// cannot run it. Constant conversions run on `stream` right away. The
// inputs and outputs are stored in `options`' edge layouts.
Result<Program> lower_partition(const Graph& partition, const dnnl::engine& engine,
                                const dnnl::stream& stream, const CompileOptions& options);

}  // namespace collage::onednn
