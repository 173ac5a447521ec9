// com.microsoft QLinearConcat as oneDNN int8 reorders into one destination.
//
// Each input is requantized to the output's scale and zero point by a
// reorder with an output scale (x_scale / y_scale) and zero points, written
// straight into its part of the destination, which lies channels-last when
// the tensors are 4-D (a part along any axis is then a plain view). The
// reorder rounds the scaled value in float32 where native dequantizes and
// quantizes: a result may land one quantization step from native's.
#pragma once

#include <cstdint>
#include <dnnl.hpp>
#include <vector>

#include "collage/backends/onednn/program.h"
#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::onednn {

struct QLinearConcatSpec {
  struct Part {
    ValueId value = kNoValue;
    float scale = 1.0f;  // x_scale / y_scale
    std::int32_t zero_point = 0;
  };
  std::vector<Part> parts;
  ValueId output = kNoValue;
  memory::data_type type = memory::data_type::u8;
  std::int32_t zero_point = 0;  // the output's
  int axis = 0;
};

// Decodes a com.microsoft QLinearConcat with constant scalar scales and zero
// points, or says why oneDNN cannot run it.
Result<QLinearConcatSpec> qlinear_concat_spec(const Graph& graph, const Node& node);

void emit_qlinear_concat(ProgramBuilder& builder, const QLinearConcatSpec& spec);

}  // namespace collage::onednn
