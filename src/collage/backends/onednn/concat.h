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

#include "collage/backends/onednn/normalization.h"
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

// A channel Concat whose output only `norm` reads (a DenseNet layer's
// input: the block's features so far, normalized and rectified), written
// as `norm`'s output (with `relu`, its Relu's, `output`) in one pass: each
// source goes through the batch norm's per-channel affine map straight into
// its part of the output, instead of being copied there and the whole read
// and written again. Where that cannot be done (a batch of more than one
// image, sources in different layouts or a blocked one split inside a
// block, parameters known only at run time, no optimized oneDNN kernel)
// nothing is emitted and false returned.
bool emit_normalized_concat(ProgramBuilder& builder, const ConcatSpec& concat,
                            const BatchNormSpec& norm, bool relu, ValueId output);

}  // namespace collage::onednn
