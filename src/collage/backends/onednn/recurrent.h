// Recurrent layers: ONNX LSTM, GRU and RNN as oneDNN's lstm_forward,
// gru_forward, lbr_gru_forward (GRU with linear_before_reset, what PyTorch
// exports) and vanilla_rnn_forward (RNN with Tanh, Relu or Sigmoid).
//
// One primitive runs every direction: ONNX's initial and final states
// [directions, batch, hidden] are oneDNN's [layers = 1, directions, batch,
// hidden] as they are, and a bidirectional layer's output, which oneDNN
// writes as [steps, batch, 2 * hidden], is reordered to ONNX's [steps,
// directions, batch, hidden]. The weights are constants, rearranged at
// compile time into oneDNN's gate order (LSTM i f c o against ONNX's i o f
// c; peepholes i f o against i o f) and then into the layout the primitive
// chooses. Initial states the node leaves out are given as zeros, and final
// states it leaves out as buffers nobody reads (oneDNN 2.6 refuses an LSTM
// whose states are partly left out). What oneDNN has no form for is
// refused: sequence_lens, batch-first layout, activations other than the
// defaults, clip and input_forget.
#pragma once

#include <dnnl.hpp>

#include "collage/backends/onednn/program.h"
#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::onednn {

struct RecurrentSpec {
  enum class Cell { kRnn, kLstm, kGru, kLinearBeforeResetGru };
  Cell cell = Cell::kLstm;
  // RNN's activation (eltwise_tanh, eltwise_relu or eltwise_logistic).
  dnnl::algorithm activation = dnnl::algorithm::eltwise_tanh;
  ValueId x = kNoValue, w = kNoValue, r = kNoValue, bias = kNoValue;
  ValueId initial_h = kNoValue, initial_c = kNoValue, peephole = kNoValue;
  // Outputs; kNoValue for those the node leaves out.
  ValueId y = kNoValue, y_h = kNoValue, y_c = kNoValue;
  std::int64_t steps = 0, batch = 0, input = 0, hidden = 0, directions = 1;
  bool reverse = false;  // direction = "reverse"
};

Result<RecurrentSpec> recurrent_spec(const Graph& graph, const Node& node);

void emit_recurrent(ProgramBuilder& builder, const RecurrentSpec& spec);

}  // namespace collage::onednn
