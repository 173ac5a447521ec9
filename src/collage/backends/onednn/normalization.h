// Normalization: ONNX BatchNormalization (inference) and LayerNormalization.
//
// Batch normalization runs with the given statistics (oneDNN's global-stats
// mode) in the input's own layout and can fuse a following Relu.
// LayerNormalization (opset 17) normalizes over the trailing dims from
// `axis` on; oneDNN normalizes over the last dim, so the input is seen as a
// [outer, inner] matrix, which for a row-major tensor is only a reshape.
#pragma once

#include <dnnl.hpp>

#include "collage/backends/onednn/program.h"
#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::onednn {

struct BatchNormSpec {
  ValueId input = kNoValue;
  ValueId scale = kNoValue;
  ValueId bias = kNoValue;
  ValueId mean = kNoValue;
  ValueId variance = kNoValue;
  ValueId output = kNoValue;
  float epsilon = 1e-5f;
  memory::dims dims;
};

Result<BatchNormSpec> batch_norm_spec(const Graph& graph, const Node& node);

// Adds the batch normalization; with `fuse_relu`, `relu_output` receives
// max(0, result) instead of spec.output receiving the result.
void emit_batch_norm(ProgramBuilder& builder, const BatchNormSpec& spec, bool fuse_relu,
                     ValueId relu_output);

struct LayerNormSpec {
  ValueId input = kNoValue;
  ValueId scale = kNoValue;
  // kNoValue when the node has no B.
  ValueId bias = kNoValue;
  ValueId output = kNoValue;
  float epsilon = 1e-5f;
  // The input as [outer, inner]; inner is normalized.
  memory::dims dims;
};

Result<LayerNormSpec> layer_norm_spec(const Graph& graph, const Node& node);

void emit_layer_norm(ProgramBuilder& builder, const LayerNormSpec& spec);

}  // namespace collage::onednn
