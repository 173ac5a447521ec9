#include "collage/backends/halide/op_table.h"

#include <algorithm>

#include "collage/backends/halide/lowerer.h"
#include "collage/backends/halide/op_support.h"
#include "collage/backends/op_rows.h"

namespace collage::halide {

const std::vector<OpRow>& op_table() {
  using P = ParameterInputs;
  static const std::vector<OpRow> table = {
      {{"Relu", "LeakyRelu", "Sigmoid",  "HardSigmoid", "HardSwish", "Swish", "Tanh",
        "Exp",  "Log",       "Sqrt",     "Reciprocal",  "Neg",       "Abs",   "Floor",
        "Ceil", "Erf",       "Identity", "Elu",         "Softplus",  "Gelu"},
       P::kNone,
       unary_supported,
       &Lowerer::lower_unary,
       ""},
      {{"Clip"}, P::kAllButFirst, clip_supported, &Lowerer::lower_unary, "constant scalar bounds"},
      {{"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "PRelu"},
       P::kNone,
       binary_supported,
       &Lowerer::lower_binary,
       ""},
      {{"Conv"},
       P::kNone,
       conv_supported,
       &Lowerer::lower_conv,
       "2-D, constant weights; grouped, depthwise, or dense with at most 27 taps"},
      {{"MaxPool", "AveragePool"}, P::kNone, pool_supported, &Lowerer::lower_pool, "2-D"},
      {{"GlobalAveragePool", "GlobalMaxPool"},
       P::kNone,
       global_pool_supported,
       &Lowerer::lower_global_pool,
       ""},
      {{"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceSumSquare", "ReduceL2"},
       P::kSecond,
       reduce_supported,
       &Lowerer::lower_reduce,
       "constant axes"},
      {{"MatMul"},
       P::kNone,
       matmul_supported,
       &Lowerer::lower_matmul,
       "reduction of at most 256, at most 4M multiply-adds"},
      {{"Gemm"}, P::kNone, gemm_supported, &Lowerer::lower_gemm, "2-D, as small as MatMul"},
      {{"Softmax"}, P::kNone, softmax_supported, &Lowerer::lower_softmax, ""},
      {{"LayerNormalization"},
       P::kNone,
       layer_norm_supported,
       &Lowerer::lower_layer_norm,
       "the normalized output only"},
      {{"BatchNormalization"},
       P::kNone,
       batch_norm_supported,
       &Lowerer::lower_batch_norm,
       "inference"},
      {{"Reshape", "Squeeze", "Unsqueeze"},
       P::kSecond,
       always_supported,
       &Lowerer::lower_reshape,
       ""},
      {{"Flatten"}, P::kNone, always_supported, &Lowerer::lower_reshape, ""},
      {{"Transpose"}, P::kNone, always_supported, &Lowerer::lower_transpose, ""},
      {{"Concat"}, P::kNone, always_supported, &Lowerer::lower_concat, ""},
      {{"Split"}, P::kSecond, always_supported, &Lowerer::lower_split, ""},
      {{"Slice"}, P::kAllButFirst, slice_supported, &Lowerer::lower_slice, "constant parameters"},
      {{"Pad"},
       P::kAllButFirst,
       pad_supported,
       &Lowerer::lower_pad,
       "constant, edge or reflect mode, constant pads"},
  };
  return table;
}

const OpRow* find_op_row(std::string_view op_type) {
  static const OpRowIndex<OpRow> index(op_table());
  return index.find(op_type);
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
