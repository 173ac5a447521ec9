// Pooling: ONNX MaxPool, AveragePool and their global forms as oneDNN pooling.
//
// ONNX's ceil_mode has no oneDNN counterpart; it is expressed as extra right
// padding that makes oneDNN's floor formula produce the output size the graph
// already holds. That is exact for max pooling and for averages that exclude
// padding; an average that counts padding would count the extra padding too,
// so that one case is rejected. Pooling reads its input in whatever layout
// the producer left it (blocked after a convolution) and keeps it.
#pragma once

#include <dnnl.hpp>

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
  // f32, or u8/s8 for a MaxPool of 8-bit values.
  memory::data_type type = memory::data_type::f32;
};

// Decodes a MaxPool, AveragePool, GlobalMaxPool or GlobalAveragePool node,
// or says why oneDNN cannot run it.
Result<PoolingSpec> pooling_spec(const Graph& graph, const Node& node);

void emit_pooling(ProgramBuilder& builder, const PoolingSpec& spec);

}  // namespace collage::onednn
