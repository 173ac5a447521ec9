// Pooling: ONNX MaxPool, AveragePool and their global forms as oneDNN pooling.
//
// ONNX's ceil_mode has no oneDNN counterpart; it is expressed as extra right
// padding that makes oneDNN's floor formula produce the output size the graph
// already holds. That is exact for max pooling and for averages that exclude
// padding; an average that counts padding would count the extra padding too,
// so that one case is rejected. The quantized averages pool 8-bit values with
// oneDNN's int8 kernel (an exact integer sum, divided in float32) and map the
// mean onto the output's scale and zero point in a post-op; a result may land
// one quantization step from native's. Their padding counts as the integer
// 0, not the zero point, so an average that counts padding is taken only
// with a zero point of 0 or no padding. Pooling reads its input in whatever layout
// the producer left it (blocked after a convolution) and keeps it.
#pragma once

#include <dnnl.hpp>
#include <optional>

#include "collage/backends/onednn/program.h"
#include "collage/backends/onednn/window.h"
#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::onednn {

struct PoolingSpec {
  dnnl::algorithm algorithm = dnnl::algorithm::pooling_max;
  ValueId input = kNoValue;
  ValueId output = kNoValue;
  memory::dims src_dims;
  memory::dims dst_dims;
  WindowDims window;
  // f32, or u8/s8 for a MaxPool of 8-bit values and the quantized averages.
  memory::data_type type = memory::data_type::f32;
  // A quantized average's y = scale·mean + shift, mapping the mean of the
  // input's 8-bit values onto the output's scale and zero point (oneDNN's
  // eltwise_linear post-op); unset for the others.
  struct Requantize {
    float scale = 1.0f;
    float shift = 0.0f;
  };
  std::optional<Requantize> requantize;
};

// Decodes a MaxPool, AveragePool, GlobalMaxPool or GlobalAveragePool node,
// or a com.microsoft QLinearAveragePool or QLinearGlobalAveragePool (8-bit
// values, constant scalar scales and zero points, channels first), or says
// why oneDNN cannot run it.
Result<PoolingSpec> pooling_spec(const Graph& graph, const Node& node);

void emit_pooling(ProgramBuilder& builder, const PoolingSpec& spec);

}  // namespace collage::onednn
