#include "collage/backends/halide/op_table.h"

#include <algorithm>

#include "collage/backends/halide/lowerer.h"
#include "collage/backends/halide/op_support.h"

namespace collage::halide {

const std::vector<OpRow>& op_table() {
  using P = ParameterInputs;
  static const std::vector<OpRow> table = {
      {{"Relu", "LeakyRelu", "Sigmoid",  "HardSigmoid", "HardSwish", "Swish", "Tanh",
        "Exp",  "Log",       "Sqrt",     "Reciprocal",  "Neg",       "Abs",   "Floor",
        "Ceil", "Erf",       "Identity", "Elu",         "Softplus",  "Gelu"},
       P::kNone,
       unary_supported,
       &Lowerer::lower_unary},
      {{"Clip"}, P::kAllButFirst, clip_supported, &Lowerer::lower_unary},
      {{"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "PRelu"},
       P::kNone,
       binary_supported,
       &Lowerer::lower_binary},
      {{"Conv"}, P::kNone, conv_supported, &Lowerer::lower_conv},
      {{"MaxPool", "AveragePool"}, P::kNone, pool_supported, &Lowerer::lower_pool},
      {{"GlobalAveragePool", "GlobalMaxPool"},
       P::kNone,
       global_pool_supported,
       &Lowerer::lower_global_pool},
      {{"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceSumSquare", "ReduceL2"},
       P::kSecond,
       reduce_supported,
       &Lowerer::lower_reduce},
      {{"MatMul"}, P::kNone, matmul_supported, &Lowerer::lower_matmul},
      {{"Gemm"}, P::kNone, gemm_supported, &Lowerer::lower_gemm},
      {{"Softmax"}, P::kNone, softmax_supported, &Lowerer::lower_softmax},
      {{"LayerNormalization"}, P::kNone, layer_norm_supported, &Lowerer::lower_layer_norm},
      {{"BatchNormalization"}, P::kNone, batch_norm_supported, &Lowerer::lower_batch_norm},
      {{"Reshape", "Squeeze", "Unsqueeze"}, P::kSecond, always_supported, &Lowerer::lower_reshape},
      {{"Flatten"}, P::kNone, always_supported, &Lowerer::lower_reshape},
      {{"Transpose"}, P::kNone, always_supported, &Lowerer::lower_transpose},
      {{"Concat"}, P::kNone, always_supported, &Lowerer::lower_concat},
      {{"Split"}, P::kSecond, always_supported, &Lowerer::lower_split},
      {{"Slice"}, P::kAllButFirst, slice_supported, &Lowerer::lower_slice},
      {{"Pad"}, P::kAllButFirst, pad_supported, &Lowerer::lower_pad},
  };
  return table;
}

const OpRow* find_op_row(std::string_view op_type) {
  for (const OpRow& row : op_table()) {
    if (std::find(row.op_types.begin(), row.op_types.end(), op_type) != row.op_types.end()) {
      return &row;
    }
  }
  return nullptr;
}

bool is_parameter_input(const OpRow& row, std::size_t i) {
  switch (row.parameters) {
    case ParameterInputs::kNone:
      return false;
    case ParameterInputs::kSecond:
      return i == 1;
    case ParameterInputs::kAllButFirst:
      return i >= 1;
  }
  return false;
}

}  // namespace collage::halide
