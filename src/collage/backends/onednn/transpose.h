// Transpose: an ONNX Transpose as a view, not a copy.
//
// The output is the input's memory seen through the input's descriptor with
// its axes permuted (memory::desc::permute_axes): the same bytes, read in
// the new order. A consumer that wants the layout the view already is reads
// it for free. That is the case a TensorFlow export makes: a channels-last
// image transposed to NCHW for a convolution that computes channels-last
// (or the convolution's channels-last output transposed back to NHWC). Any
// other consumer reorders it once, as it would any layout it does not take.
#pragma once

#include <vector>

#include "collage/backends/onednn/program.h"
#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::onednn {

struct TransposeSpec {
  ValueId input = kNoValue;
  ValueId output = kNoValue;
  // ONNX's perm: output dim i is input dim perm[i].
  std::vector<int> perm;
};

Result<TransposeSpec> transpose_spec(const Graph& graph, const Node& node);

void emit_transpose(ProgramBuilder& builder, const TransposeSpec& spec);

}  // namespace collage::onednn
