#include "collage/backends/onednn/recurrent.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collage/backends/onednn/layout.h"
#include "collage/backends/onednn/node_checks.h"
#include "collage/ir/error.h"
#include "collage/ir/recurrent.h"

namespace collage::onednn {
namespace {

using Cell = RecurrentSpec::Cell;

// Whether the node's activations are the op's defaults (the only ones
// oneDNN's LSTM and GRU cells compute).
bool default_activations(const Node& node, std::int64_t directions) {
  const std::vector<std::string> defaults = default_recurrent_activations(node.op_type);
  std::vector<std::string> names;
  try {
    names = recurrent_activations(node, static_cast<int>(directions));
  } catch (const Error&) {
    return false;
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!same_activation(names[i], defaults[i % defaults.size()])) return false;
  }
  return true;
}

// ONNX's gate of each oneDNN gate: LSTM's i f c o are ONNX's gates 0 2 3 1;
// GRU's u r o are ONNX's z r h.
std::vector<std::int64_t> onnx_gates(Cell cell) {
  if (cell == Cell::kLstm) return {0, 2, 3, 1};
  if (cell == Cell::kRnn) return {0};
  return {0, 1, 2};
}

// RNN's activation as oneDNN's algorithm: one of the three its cell
// computes, the same for every direction (one primitive runs them all).
std::optional<dnnl::algorithm> rnn_activation(const Node& node, std::int64_t directions) {
  std::vector<std::string> names;
  try {
    names = recurrent_activations(node, static_cast<int>(directions));
  } catch (const Error&) {
    return std::nullopt;
  }
  for (const std::string& name : names) {
    if (!same_activation(name, names[0])) return std::nullopt;
  }
  if (same_activation(names[0], "Tanh")) return dnnl::algorithm::eltwise_tanh;
  if (same_activation(names[0], "Relu")) return dnnl::algorithm::eltwise_relu;
  if (same_activation(names[0], "Sigmoid")) return dnnl::algorithm::eltwise_logistic;
  return std::nullopt;
}

// W [D, G * C, K] (ONNX) as oneDNN's ldigo [1, D, K, G, C].
Tensor weights_ldigo(const Tensor& w, const std::vector<std::int64_t>& gates, std::int64_t hidden) {
  const Shape& shape = w.shape();
  const std::int64_t directions = shape[0], k = shape[2];
  const auto g_count = static_cast<std::int64_t>(gates.size());
  Tensor out = Tensor::allocate(TensorType{DType::kFloat32, {1, directions, k, g_count, hidden}});
  const float* in = w.data<float>();
  float* o = out.data<float>();
  for (std::int64_t d = 0; d < directions; ++d) {
    for (std::int64_t i = 0; i < k; ++i) {
      for (std::int64_t g = 0; g < g_count; ++g) {
        const float* row = in + (d * g_count + gates[g]) * hidden * k;
        float* dst = o + ((d * k + i) * g_count + g) * hidden;
        for (std::int64_t c = 0; c < hidden; ++c) dst[c] = row[c * k + i];
      }
    }
  }
  return out;
}

// oneDNN's bias ldgo [1, D, G', C]: Wb + Rb per gate, except that
// linear_before_reset keeps the candidate's two apart (a fourth gate).
Tensor bias_ldgo(const Tensor* b, Cell cell, std::int64_t directions, std::int64_t hidden) {
  const std::vector<std::int64_t> gates = onnx_gates(cell);
  const auto onnx_count = static_cast<std::int64_t>(gates.size());
  const std::int64_t count = cell == Cell::kLinearBeforeResetGru ? 4 : onnx_count;
  Tensor out = Tensor::allocate(TensorType{DType::kFloat32, {1, directions, count, hidden}});
  float* o = out.data<float>();
  std::fill(o, o + out.numel(), 0.0f);
  if (b == nullptr) return out;
  for (std::int64_t d = 0; d < directions; ++d) {
    const float* wb = b->data<float>() + d * 2 * onnx_count * hidden;
    const float* rb = wb + onnx_count * hidden;
    float* dst = o + d * count * hidden;
    for (std::int64_t g = 0; g < onnx_count; ++g) {
      const bool split = cell == Cell::kLinearBeforeResetGru && g == 2;
      for (std::int64_t c = 0; c < hidden; ++c) {
        dst[g * hidden + c] =
            wb[gates[g] * hidden + c] + (split ? 0.0f : rb[gates[g] * hidden + c]);
      }
    }
    if (cell == Cell::kLinearBeforeResetGru) {
      std::copy_n(rb + 2 * hidden, hidden, dst + 3 * hidden);
    }
  }
  return out;
}

// P [D, 3C] (ONNX i o f) as oneDNN's ldgo [1, D, 3, C] (i f o).
Tensor peephole_ldgo(const Tensor& p, std::int64_t directions, std::int64_t hidden) {
  Tensor out = Tensor::allocate(TensorType{DType::kFloat32, {1, directions, 3, hidden}});
  constexpr std::array<std::int64_t, 3> kOnnxGate = {0, 2, 1};
  for (std::int64_t d = 0; d < directions; ++d) {
    for (std::int64_t g = 0; g < 3; ++g) {
      std::copy_n(p.data<float>() + (d * 3 + kOnnxGate[g]) * hidden, hidden,
                  out.data<float>() + (d * 3 + g) * hidden);
    }
  }
  return out;
}

}  // namespace

Result<RecurrentSpec> recurrent_spec(const Graph& graph, const Node& node) {
  if ((node.op_type != "LSTM" && node.op_type != "GRU" && node.op_type != "RNN") ||
      !in_onnx_domain(node)) {
    return Failure{fmt::format("{} is not LSTM, GRU or RNN", node.op_type)};
  }
  const bool lstm = node.op_type == "LSTM";
  const bool rnn = node.op_type == "RNN";
  if (auto problem = tensor_problem(graph, node, lstm ? 8 : 6)) return Failure{*problem};
  RecurrentSpec spec;
  spec.x = node.input(0);
  spec.w = node.input(1);
  spec.r = node.input(2);
  spec.bias = node.input(3);
  spec.initial_h = node.input(5);
  spec.initial_c = lstm ? node.input(6) : kNoValue;
  spec.peephole = lstm ? node.input(7) : kNoValue;
  auto output = [&](std::size_t i) { return i < node.outputs.size() ? node.outputs[i] : kNoValue; };
  spec.y = output(0);
  spec.y_h = output(1);
  spec.y_c = lstm ? output(2) : kNoValue;
  if (spec.x == kNoValue || spec.w == kNoValue || spec.r == kNoValue) {
    return Failure{"X, W and R are required"};
  }
  if (node.input(4) != kNoValue) return Failure{"sequence_lens (oneDNN runs every sequence whole)"};
  for (ValueId weights : {spec.w, spec.r, spec.bias, spec.peephole}) {
    if (weights != kNoValue && !graph.value(weights).is_constant()) {
      return Failure{"W, R, B and P must be constants"};
    }
  }
  if (node.attributes.get_int("layout", 0) != 0) return Failure{"layout = 1 (batch first)"};
  if (node.attributes.has("clip")) return Failure{"clip"};
  if (node.attributes.has("activation_alpha") || node.attributes.has("activation_beta")) {
    return Failure{"activation_alpha or activation_beta"};
  }
  if (lstm && node.attributes.get_int("input_forget", 0) != 0) return Failure{"input_forget"};
  const std::string direction = node.attributes.get_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return Failure{fmt::format("direction '{}'", direction)};
  }
  spec.reverse = direction == "reverse";
  spec.directions = direction == "bidirectional" ? 2 : 1;
  if (rnn) {
    const std::optional<dnnl::algorithm> activation = rnn_activation(node, spec.directions);
    if (!activation) return Failure{"RNN activations other than one of Tanh, Relu and Sigmoid"};
    spec.activation = *activation;
    spec.cell = Cell::kRnn;
  } else if (!default_activations(node, spec.directions)) {
    return Failure{"activations other than the defaults"};
  } else if (lstm) {
    spec.cell = Cell::kLstm;
  } else {
    spec.cell = node.attributes.get_int("linear_before_reset", 0) != 0 ? Cell::kLinearBeforeResetGru
                                                                       : Cell::kGru;
  }
  const Shape& x = graph.type(spec.x).shape;
  const Shape& r = graph.type(spec.r).shape;
  if (x.size() != 3 || r.size() != 3) return Failure{"X and R must have rank 3"};
  spec.steps = x[0];
  spec.batch = x[1];
  spec.input = x[2];
  spec.hidden = r[2];
  const std::int64_t gates = lstm ? 4 : rnn ? 1 : 3;
  if (node.attributes.get_int("hidden_size", spec.hidden) != spec.hidden) {
    return Failure{"hidden_size does not match R"};
  }
  const Shape state = {spec.directions, spec.batch, spec.hidden};
  auto has_shape = [&](ValueId value, const Shape& shape) {
    return value == kNoValue || graph.type(value).shape == shape;
  };
  if (!has_shape(spec.w, {spec.directions, gates * spec.hidden, spec.input}) ||
      !has_shape(spec.r, {spec.directions, gates * spec.hidden, spec.hidden}) ||
      !has_shape(spec.bias, {spec.directions, 2 * gates * spec.hidden}) ||
      !has_shape(spec.peephole, {spec.directions, 3 * spec.hidden}) ||
      !has_shape(spec.initial_h, state) || !has_shape(spec.initial_c, state) ||
      !has_shape(spec.y, {spec.steps, spec.directions, spec.batch, spec.hidden}) ||
      !has_shape(spec.y_h, state) || !has_shape(spec.y_c, state)) {
    return Failure{"a tensor's shape does not match X, R and hidden_size"};
  }
  return spec;
}

namespace {

// The memory descriptors and direction of a recurrent primitive for `spec`.
struct RecurrentDescs {
  memory::desc src_layer, dst_layer;
  memory::desc src_iter, src_iter_c, dst_iter, dst_iter_c;
  memory::desc weights_layer, weights_iter, bias;
  dnnl::rnn_direction direction;
};

RecurrentDescs recurrent_descs(const RecurrentSpec& spec) {
  const std::int64_t t = spec.steps, n = spec.batch, c = spec.hidden, d = spec.directions;
  const auto g = static_cast<std::int64_t>(onnx_gates(spec.cell).size());
  const memory::dims state = {1, d, n, c};
  const std::int64_t bias_gates = spec.cell == Cell::kLinearBeforeResetGru ? 4 : g;
  // Every state is given, as zeros or as a buffer nobody reads where the
  // node leaves it out: oneDNN 2.6 refuses an LSTM whose iteration states
  // are partly left out.
  return RecurrentDescs{.src_layer = plain_desc({t, n, spec.input}),
                        .dst_layer = plain_desc({t, n, d * c}),
                        .src_iter = plain_desc(state),
                        .src_iter_c = plain_desc(state),
                        .dst_iter = plain_desc(state),
                        .dst_iter_c = plain_desc(state),
                        .weights_layer = any_desc({1, d, spec.input, g, c}),
                        .weights_iter = any_desc({1, d, c, g, c}),
                        .bias = plain_desc({1, d, bias_gates, c}),
                        .direction = d == 2 ? dnnl::rnn_direction::bidirectional_concat
                                     : spec.reverse
                                         ? dnnl::rnn_direction::unidirectional_right2left
                                         : dnnl::rnn_direction::unidirectional_left2right};
}

// The primitive of `spec`'s cell, with the weight layouts it chose.
struct RecurrentPrimitive {
  dnnl::primitive primitive;
  memory::desc weights_layer, weights_iter;
};

// Makes the cell's primitive; an LSTM's peepholes go into `args`.
RecurrentPrimitive recurrent_primitive(ProgramBuilder& builder, const RecurrentSpec& spec,
                                       const RecurrentDescs& m,
                                       std::unordered_map<int, memory>& args) {
  constexpr auto kInference = dnnl::prop_kind::forward_inference;
  const std::int64_t c = spec.hidden, d = spec.directions;
  RecurrentPrimitive made;
  // What every cell's primitive descriptor gives the same way.
  const auto adopt = [&](dnnl::primitive primitive, const auto& pd) {
    made = {std::move(primitive), pd.weights_layer_desc(), pd.weights_iter_desc()};
  };
  if (spec.cell == Cell::kLstm) {
    // Without peepholes, the form that has none (a zero peephole
    // descriptor is refused).
    const dnnl::lstm_forward::desc desc =
        spec.peephole != kNoValue
            ? dnnl::lstm_forward::desc(kInference, m.direction, m.src_layer, m.src_iter,
                                       m.src_iter_c, m.weights_layer, m.weights_iter,
                                       plain_desc({1, d, 3, c}), m.bias, m.dst_layer, m.dst_iter,
                                       m.dst_iter_c)
            : dnnl::lstm_forward::desc(kInference, m.direction, m.src_layer, m.src_iter,
                                       m.src_iter_c, m.weights_layer, m.weights_iter, m.bias,
                                       m.dst_layer, m.dst_iter, m.dst_iter_c);
    dnnl::lstm_forward::primitive_desc pd(desc, builder.engine());
    adopt(dnnl::lstm_forward(pd), pd);
    if (spec.peephole != kNoValue) {
      const ValueId p = builder.add_constant(peephole_ldgo(builder.constant(spec.peephole), d, c));
      args[DNNL_ARG_WEIGHTS_PEEPHOLE] = builder.read(p, pd.weights_peephole_desc());
    }
  } else if (spec.cell == Cell::kRnn) {
    dnnl::vanilla_rnn_forward::desc desc(kInference, spec.activation, m.direction, m.src_layer,
                                         m.src_iter, m.weights_layer, m.weights_iter, m.bias,
                                         m.dst_layer, m.dst_iter);
    dnnl::vanilla_rnn_forward::primitive_desc pd(desc, builder.engine());
    adopt(dnnl::vanilla_rnn_forward(pd), pd);
  } else {
    // The two GRU primitives take the same descriptors.
    auto gru = [&](auto kind) {
      using Primitive = decltype(kind);
      typename Primitive::desc desc(kInference, m.direction, m.src_layer, m.src_iter,
                                    m.weights_layer, m.weights_iter, m.bias, m.dst_layer,
                                    m.dst_iter);
      typename Primitive::primitive_desc pd(desc, builder.engine());
      adopt(Primitive(pd), pd);
    };
    if (spec.cell == Cell::kGru) {
      gru(dnnl::gru_forward());
    } else {
      gru(dnnl::lbr_gru_forward());
    }
  }
  return made;
}

// Binds the weights, bias and initial states (zeros where the node leaves
// them out) of `spec` into `args`.
void bind_inputs(ProgramBuilder& builder, const RecurrentSpec& spec, const RecurrentDescs& m,
                 const RecurrentPrimitive& made, std::unordered_map<int, memory>& args) {
  const std::int64_t n = spec.batch, c = spec.hidden, d = spec.directions;
  const std::vector<std::int64_t> gates = onnx_gates(spec.cell);
  const ValueId w = builder.add_constant(weights_ldigo(builder.constant(spec.w), gates, c));
  const ValueId r = builder.add_constant(weights_ldigo(builder.constant(spec.r), gates, c));
  const ValueId b = builder.add_constant(
      bias_ldgo(spec.bias != kNoValue ? &builder.constant(spec.bias) : nullptr, spec.cell, d, c));
  args[DNNL_ARG_SRC_LAYER] = builder.read(spec.x, m.src_layer);
  args[DNNL_ARG_WEIGHTS_LAYER] = builder.read(w, made.weights_layer);
  args[DNNL_ARG_WEIGHTS_ITER] = builder.read(r, made.weights_iter);
  args[DNNL_ARG_BIAS] = builder.read(b, m.bias);
  auto initial = [&](ValueId value) {
    if (value != kNoValue) return builder.read(value, m.src_iter);
    const ValueId zeros =
        builder.add_constant(Tensor::zeros(TensorType{DType::kFloat32, {1, d, n, c}}));
    return builder.read(zeros, m.src_iter);
  };
  args[DNNL_ARG_SRC_ITER] = initial(spec.initial_h);
  if (spec.cell == Cell::kLstm) args[DNNL_ARG_SRC_ITER_C] = initial(spec.initial_c);
}

}  // namespace

void emit_recurrent(ProgramBuilder& builder, const RecurrentSpec& spec) {
  const std::int64_t t = spec.steps, n = spec.batch, c = spec.hidden, d = spec.directions;
  const RecurrentDescs m = recurrent_descs(spec);
  std::unordered_map<int, memory> args;
  const RecurrentPrimitive made = recurrent_primitive(builder, spec, m, args);
  bind_inputs(builder, spec, m, made, args);
  // The final states are ONNX's as they are; Y is too for one direction.
  const memory::desc y_desc = plain_desc({t, d, n, c});
  memory y_memory, dst_layer_memory;
  if (d == 1 && spec.y != kNoValue) {
    y_memory = builder.output_memory(spec.y, y_desc);
    dst_layer_memory = builder.view_of(y_memory, m.dst_layer);
  } else {
    dst_layer_memory = memory(m.dst_layer, builder.engine());
  }
  args[DNNL_ARG_DST_LAYER] = dst_layer_memory;
  memory h_memory, c_memory;
  const memory::desc state_desc = plain_desc({d, n, c});
  auto final_state = [&](ValueId value, memory& kept) {
    if (value == kNoValue) return memory(m.dst_iter, builder.engine());
    kept = builder.output_memory(value, state_desc);
    return builder.view_of(kept, m.dst_iter);
  };
  args[DNNL_ARG_DST_ITER] = final_state(spec.y_h, h_memory);
  if (spec.cell == Cell::kLstm) args[DNNL_ARG_DST_ITER_C] = final_state(spec.y_c, c_memory);
  builder.add(made.primitive, std::move(args));
  if (spec.y != kNoValue && d == 2) {
    // [steps, batch, directions, hidden] as written, to [steps, directions,
    // batch, hidden]: a reorder from a strided view of the same bytes.
    const memory source =
        builder.view_of(dst_layer_memory, strided_desc({t, d, n, c}, {n * d * c, c, d * c, 1}));
    y_memory = builder.output_memory(spec.y, y_desc);
    builder.add(dnnl::reorder(source, y_memory),
                {{DNNL_ARG_FROM, source}, {DNNL_ARG_TO, y_memory}});
  }
  if (spec.y != kNoValue) builder.define(spec.y, y_memory);
  if (spec.y_h != kNoValue) builder.define(spec.y_h, h_memory);
  if (spec.y_c != kNoValue) builder.define(spec.y_c, c_memory);
}

}  // namespace collage::onednn
