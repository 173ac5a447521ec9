#include "collage/backends/onednn/op_table.h"

#include <algorithm>

#include "collage/backends/onednn/binary.h"
#include "collage/backends/onednn/concat.h"
#include "collage/backends/onednn/convolution.h"
#include "collage/backends/onednn/eltwise.h"
#include "collage/backends/onednn/lowering_error.h"
#include "collage/backends/onednn/matmul.h"
#include "collage/backends/onednn/normalization.h"
#include "collage/backends/onednn/pooling.h"
#include "collage/backends/onednn/qlinear_concat.h"
#include "collage/backends/onednn/qlinear_conv.h"
#include "collage/backends/onednn/qlinear_elementwise.h"
#include "collage/backends/onednn/qlinear_matmul.h"
#include "collage/backends/onednn/quantize_linear.h"
#include "collage/backends/onednn/recurrent.h"
#include "collage/backends/onednn/softmax.h"
#include "collage/backends/onednn/transpose.h"
#include "collage/backends/op_rows.h"

namespace collage::onednn {
namespace {

template <typename T>
std::optional<std::string> reason(const Result<T>& result) {
  if (result) return std::nullopt;
  return result.error();
}

std::size_t emit_activation(ProgramBuilder& builder, const FusedOp&, const Node& node) {
  emit_eltwise(builder, node.input(0), node.outputs[0],
               require(eltwise_steps(builder.graph(), node)));
  return 0;
}

std::size_t emit_binary_op(ProgramBuilder& builder, const FusedOp& op, const Node& node) {
  return emit_binary(builder, require(binary_spec(builder.graph(), node)), op.chain());
}

std::size_t emit_convolution_op(ProgramBuilder& builder, const FusedOp& op, const Node& node) {
  ConvolutionSpec spec = require(convolution_spec(builder.graph(), node));
  if (op.bias_add) {
    spec.bias = op.bias;
    spec.output = op.anchor_output();
  }
  return emit_convolution(builder, spec, op.chain());
}

std::size_t emit_matmul_op(ProgramBuilder& builder, const FusedOp& op, const Node& node) {
  MatMulSpec spec = require(matmul_spec(builder.graph(), node));
  if (op.bias_add) {
    spec.bias = op.bias;
    spec.output = op.anchor_output();
  }
  return emit_matmul(builder, spec, op.chain());
}

std::size_t emit_batch_norm_op(ProgramBuilder& builder, const FusedOp& op, const Node& node) {
  // Fusion gives a batch norm at most a Relu, which oneDNN fuses by flag.
  emit_batch_norm(builder, require(batch_norm_spec(builder.graph(), node)), !op.post.empty(),
                  op.output());
  return op.post.size();
}

std::size_t emit_layer_norm_op(ProgramBuilder& builder, const FusedOp&, const Node& node) {
  emit_layer_norm(builder, require(layer_norm_spec(builder.graph(), node)));
  return 0;
}

std::size_t emit_softmax_op(ProgramBuilder& builder, const FusedOp&, const Node& node) {
  emit_softmax(builder, require(softmax_spec(builder.graph(), node)));
  return 0;
}

std::size_t emit_transpose_op(ProgramBuilder& builder, const FusedOp&, const Node& node) {
  emit_transpose(builder, require(transpose_spec(builder.graph(), node)));
  return 0;
}

std::size_t emit_concat_op(ProgramBuilder& builder, const FusedOp& op, const Node& node) {
  const ConcatSpec spec = require(concat_spec(builder.graph(), node));
  // Fusion gives a Concat at most the BatchNormalization reading it and
  // that one's Relu.
  if (op.post.empty()) {
    emit_concat(builder, spec);
    return 0;
  }
  Result<BatchNormSpec> norm =
      batch_norm_spec(builder.graph(), builder.graph().node(op.post.front().unit.node));
  if (!norm) {
    emit_concat(builder, spec);
    return 0;
  }
  const bool relu = op.post.size() > 1;
  if (!emit_normalized_concat(builder, spec, norm.value(), relu, op.output())) {
    emit_concat(builder, spec);
    emit_batch_norm(builder, norm.value(), relu, op.output());
  }
  return op.post.size();
}

std::size_t emit_pooling_op(ProgramBuilder& builder, const FusedOp&, const Node& node) {
  emit_pooling(builder, require(pooling_spec(builder.graph(), node)));
  return 0;
}

std::size_t emit_qlinear_conv_op(ProgramBuilder& builder, const FusedOp&, const Node& node) {
  emit_qlinear_conv(builder, require(qlinear_conv_spec(builder.graph(), node)));
  return 0;
}

std::size_t emit_qlinear_matmul_op(ProgramBuilder& builder, const FusedOp&, const Node& node) {
  emit_qlinear_matmul(builder, require(qlinear_matmul_spec(builder.graph(), node)));
  return 0;
}

std::size_t emit_qlinear_concat_op(ProgramBuilder& builder, const FusedOp&, const Node& node) {
  emit_qlinear_concat(builder, require(qlinear_concat_spec(builder.graph(), node)));
  return 0;
}

std::size_t emit_qlinear_binary_op(ProgramBuilder& builder, const FusedOp&, const Node& node) {
  emit_qlinear_binary(builder, require(qlinear_binary_spec(builder.graph(), node)));
  return 0;
}

std::size_t emit_qlinear_unary_op(ProgramBuilder& builder, const FusedOp&, const Node& node) {
  emit_qlinear_unary(builder, require(qlinear_unary_spec(builder.graph(), node)));
  return 0;
}

std::size_t emit_quantize_linear_op(ProgramBuilder& builder, const FusedOp&, const Node& node) {
  emit_quantize_linear(builder, require(quantize_linear_spec(builder.graph(), node)));
  return 0;
}

std::size_t emit_recurrent_op(ProgramBuilder& builder, const FusedOp&, const Node& node) {
  emit_recurrent(builder, require(recurrent_spec(builder.graph(), node)));
  return 0;
}

}  // namespace

const std::vector<OpRow>& op_table() {
  static const std::vector<OpRow> table = {
      {{"Conv", "ConvTranspose"},
       [](const Graph& g, const Node& n) { return reason(convolution_spec(g, n)); },
       emit_convolution_op},
      {{"MatMul", "Gemm"},
       [](const Graph& g, const Node& n) { return reason(matmul_spec(g, n)); },
       emit_matmul_op},
      {{"MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool",
        "com.microsoft.QLinearAveragePool", "com.microsoft.QLinearGlobalAveragePool"},
       [](const Graph& g, const Node& n) { return reason(pooling_spec(g, n)); },
       emit_pooling_op},
      {{"Concat"},
       [](const Graph& g, const Node& n) { return reason(concat_spec(g, n)); },
       emit_concat_op},
      {{"Transpose"},
       [](const Graph& g, const Node& n) { return reason(transpose_spec(g, n)); },
       emit_transpose_op},
      {{"BatchNormalization"},
       [](const Graph& g, const Node& n) { return reason(batch_norm_spec(g, n)); },
       emit_batch_norm_op},
      {{"LayerNormalization"},
       [](const Graph& g, const Node& n) { return reason(layer_norm_spec(g, n)); },
       emit_layer_norm_op},
      {{"Softmax", "LogSoftmax", "com.microsoft.QLinearSoftmax"},
       [](const Graph& g, const Node& n) { return reason(softmax_spec(g, n)); },
       emit_softmax_op},
      {{"QLinearConv", "collage.QLinearConvTranspose"},
       [](const Graph& g, const Node& n) { return reason(qlinear_conv_spec(g, n)); },
       emit_qlinear_conv_op},
      {{"QLinearMatMul", "com.microsoft.QGemm"},
       [](const Graph& g, const Node& n) { return reason(qlinear_matmul_spec(g, n)); },
       emit_qlinear_matmul_op},
      {{"com.microsoft.QLinearConcat"},
       [](const Graph& g, const Node& n) { return reason(qlinear_concat_spec(g, n)); },
       emit_qlinear_concat_op},
      {{"com.microsoft.QLinearAdd", "com.microsoft.QLinearMul"},
       [](const Graph& g, const Node& n) { return reason(qlinear_binary_spec(g, n)); },
       emit_qlinear_binary_op},
      {{"com.microsoft.QLinearSigmoid", "com.microsoft.QLinearLeakyRelu",
        "collage.QLinearHardSwish", "collage.QLinearHardSigmoid"},
       [](const Graph& g, const Node& n) { return reason(qlinear_unary_spec(g, n)); },
       emit_qlinear_unary_op},
      {{"QuantizeLinear", "DequantizeLinear"},
       [](const Graph& g, const Node& n) { return reason(quantize_linear_spec(g, n)); },
       emit_quantize_linear_op},
      {{"LSTM", "GRU", "RNN"},
       [](const Graph& g, const Node& n) { return reason(recurrent_spec(g, n)); },
       emit_recurrent_op},
      {binary_ops(), [](const Graph& g, const Node& n) { return reason(binary_spec(g, n)); },
       emit_binary_op},
      {activation_ops(), [](const Graph& g, const Node& n) { return reason(eltwise_steps(g, n)); },
       emit_activation},
  };
  return table;
}

const OpRow* find_op_row(std::string_view op_type) {
  static const OpRowIndex<OpRow> index(op_table());
  return index.find(op_type);
}

}  // namespace collage::onednn
