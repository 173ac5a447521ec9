#include "collage/backends/xnnpack/op_table.h"

#include "collage/backends/op_rows.h"
#include "collage/backends/xnnpack/emitters.h"
#include "collage/backends/xnnpack/op_support.h"
#include "collage/backends/xnnpack/quantized.h"

namespace collage::xnnpack {

const std::vector<OpRow>& op_table() {
  using enum LayoutRule;
  static const std::vector<OpRow> table = {
      // Activations (emit_activation.cc).
      {{"Abs"}, is_unary, kFollowInput, emit_abs, ""},
      {{"Ceil"}, is_unary, kFollowInput, emit_ceil, ""},
      {{"Floor"}, is_unary, kFollowInput, emit_floor, ""},
      {{"HardSwish"}, is_unary, kFollowInput, emit_hard_swish, ""},
      {{"Identity"}, is_unary, kFollowInput, emit_identity, ""},
      {{"Neg"}, is_unary, kFollowInput, emit_neg, ""},
      {{"Round"}, is_unary, kFollowInput, emit_round, ""},
      {{"Sigmoid"}, is_unary, kFollowInput, emit_sigmoid, ""},
      {{"Sqrt"}, is_unary, kFollowInput, emit_sqrt, ""},
      {{"Relu"}, is_clamp, kFollowInput, emit_clamp, ""},
      {{"Clip"}, is_clamp, kFollowInput, emit_clamp, "constant bounds"},
      {{"LeakyRelu"}, is_leaky_relu, kFollowInput, emit_leaky_relu, ""},
      {{"Elu"}, is_elu, kFollowInput, emit_elu, ""},
      {{"Pow"}, is_pow, kFollowInput, emit_pow, "by 2 or 0.5"},
      {{"HardSigmoid"}, is_hard_sigmoid, kFollowInput, emit_hard_sigmoid, ""},
      {{"Swish"}, is_swish, kFollowInput, emit_swish, "as x * sigmoid(alpha * x)"},
      {{"Gelu"},
       is_gelu_tanh,
       kFollowInput,
       emit_gelu_tanh,
       "tanh form only, as x * sigmoid(2u); no erf in this XNNPACK"},
      {{"PRelu"}, is_prelu, kPrelu, emit_prelu, "per-channel slope"},
      {{"Softmax"}, is_softmax, kSoftmax, emit_softmax, "normalized axes innermost"},
      // Arithmetic (emit_arithmetic.cc).
      {{"Add"}, is_binary, kBroadcast, emit_add, ""},
      {{"Sub"}, is_binary, kBroadcast, emit_sub, ""},
      {{"Mul"}, is_binary, kBroadcast, emit_mul, ""},
      {{"Div"}, is_binary, kBroadcast, emit_div, ""},
      {{"Sum"}, is_broadcast, kBroadcast, emit_add, ""},
      {{"Max"}, is_broadcast, kBroadcast, emit_max, ""},
      {{"Min"}, is_broadcast, kBroadcast, emit_min, ""},
      {{"BatchNormalization"},
       is_batch_norm,
       kFollowInput,
       emit_batch_norm,
       "inference; folded into a preceding Conv"},
      // Convolution (emit_convolution.cc).
      {{"Conv"},
       is_conv,
       kChannelsLast,
       emit_conv,
       "2-D, constant weights; groups, depthwise, dilations, auto_pad"},
      {{"ConvTranspose"}, is_conv, kChannelsLast, emit_conv_transpose, "2-D, constant weights"},
      // Pooling (emit_pooling.cc).
      {{"MaxPool"}, is_pool, kChannelsLast, emit_max_pool, "2-D, ceil_mode"},
      {{"AveragePool"}, is_pool, kChannelsLast, emit_average_pool, "2-D, ceil_mode"},
      {{"GlobalMaxPool"}, is_global_pool, kChannelsLast, emit_global_max_pool, ""},
      {{"GlobalAveragePool"}, is_global_pool, kChannelsLast, emit_global_average_pool, ""},
      // Fully connected (emit_fully_connected.cc).
      {{"Gemm"}, is_gemm, kPlain, emit_gemm, "by a constant 2-D matrix"},
      {{"MatMul"}, is_matmul, kPlain, emit_matmul, "by a constant 2-D matrix"},
      // Data movement (emit_data_movement.cc).
      {{"Flatten", "Reshape", "Squeeze", "Unsqueeze"}, is_reshape, kPlain, emit_reshape, ""},
      {{"Pad"}, is_pad, kFollowInput, emit_pad, "constant, non-negative"},
      {{"DepthToSpace"}, is_depth_to_space, kChannelsLast, emit_depth_to_space, ""},
      {{"Resize"},
       is_resize,
       kChannelsLast,
       emit_resize,
       "linear, 2-D, half_pixel/align_corners/asymmetric"},
      // Quantized ops on int8 (uint8 shifted by 128) values (quantized.h,
      // emit_quantized.cc). MaxPool and the reshapes above take 8-bit values too.
      {{"QuantizeLinear", "DequantizeLinear"},
       is_quantize_or_dequantize,
       kFollowInput,
       emit_convert,
       "int8/uint8, one scale and zero point"},
      {{"QLinearConv"},
       is_qlinear_conv,
       kChannelsLast,
       emit_qlinear_conv,
       "2-D, int8 weights with zero points 0, one scale or one per channel; depthwise"},
      {{"QLinearConvTranspose"},
       is_qlinear_conv_transpose,
       kChannelsLast,
       emit_qlinear_conv_transpose,
       "collage, 2-D, int8 weights with zero point 0 and one scale"},
      {{"QGemm", "QLinearMatMul"},
       is_qlinear_matmul,
       kPlain,
       emit_qlinear_matmul,
       "by a constant 2-D int8 matrix with zero points 0, alpha 1"},
      {{"QLinearAdd"}, is_qlinear_binary, kBroadcast, emit_qlinear_add, "com.microsoft"},
      {{"QLinearMul"}, is_qlinear_binary, kBroadcast, emit_qlinear_mul, "com.microsoft"},
      {{"QLinearGlobalAveragePool"},
       is_qlinear_global_average_pool,
       kChannelsLast,
       emit_global_average_pool,
       "com.microsoft, NCHW"},
      {{"QLinearSigmoid"},
       is_qlinear_unary,
       kFollowInput,
       emit_qlinear_sigmoid,
       "com.microsoft; in float32 between converts unless into scale 1/256"},
      {{"QLinearAveragePool"},
       is_qlinear_average_pool,
       kChannelsLast,
       emit_qlinear_average_pool,
       "com.microsoft, NCHW, 2-D; in float32 between converts"},
      {{"QLinearLeakyRelu"},
       is_qlinear_unary,
       kFollowInput,
       emit_qlinear_leaky_relu,
       "com.microsoft; in float32 between converts"},
      {{"QLinearHardSwish"},
       is_qlinear_unary,
       kFollowInput,
       emit_qlinear_hard_swish,
       "collage; in float32 between converts"},
      {{"QLinearHardSigmoid"},
       is_qlinear_unary,
       kFollowInput,
       emit_qlinear_hard_sigmoid,
       "collage; in float32 between converts"},
  };
  return table;
}

const OpRow* find_op_row(std::string_view op_type) {
  static const OpRowIndex<OpRow> index(op_table());
  return index.find(op_type);
}

bool supports_node(const Graph& graph, const Node& node) {
  if (!node.domain.empty() && node.domain != "ai.onnx" && !is_other_domain_quantized_op(node)) {
    return false;
  }
  const OpRow* row = find_op_row(node.op_type);
  return row != nullptr && row->check(graph, node);
}

std::string describe_ops() { return describe_op_rows(op_table()); }

LayoutRule layout_rule(const Node& node) {
  const OpRow* row = find_op_row(node.op_type);
  return row == nullptr ? LayoutRule::kPlain : row->layout;
}

}  // namespace collage::xnnpack
