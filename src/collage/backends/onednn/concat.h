// Concat: ONNX Concat as a oneDNN concat primitive.
//
// The sources are read in the layouts their producers left them in (NHWC or
// blocked after a convolution) and oneDNN picks the destination's layout
// from them, so a concatenation of convolution outputs along the channels
// (SqueezeNet's fire modules, feature pyramids) stays in the convolutions'
// layout instead of going through plain NCHW and back.
#pragma once

#include <dnnl.hpp>
#include <vector>

#include "collage/backends/onednn/program.h"
#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::onednn {

struct ConcatSpec {
  std::vector<ValueId> inputs;
  ValueId output = kNoValue;
  // The axis, made non-negative.
  int axis = 0;
};

// Decodes a Concat node of float32 tensors, or says why oneDNN cannot run it.
Result<ConcatSpec> concat_spec(const Graph& graph, const Node& node);

void emit_concat(ProgramBuilder& builder, const ConcatSpec& spec);

}  // namespace collage::onednn
