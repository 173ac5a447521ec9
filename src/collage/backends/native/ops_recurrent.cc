// The recurrent layers: RNN, GRU and LSTM.
//
// Each direction runs on its own. The input's contribution to every gate at
// every step is one GEMM over the whole sequence (X W^T plus the biases that
// do not depend on the hidden state); each step then adds the recurrent GEMM
// H(t-1) R^T and applies the gates. A batch entry with a shorter sequence
// (sequence_lens) stops early: its later outputs are zeros and its final
// state is the one after its last step; in the reverse direction it starts
// from its own last step.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "collage/backends/native/compute_kernels.h"
#include "collage/backends/native/sgemm.h"
#include "collage/ir/error.h"

namespace collage::native {
namespace {

enum class Cell { kRnn, kGru, kLstm };

// The activation functions ONNX's recurrent ops name, with their alpha and
// beta (the defaults of the op of the same name).
struct Activation {
  enum Kind {
    kSigmoid,
    kTanh,
    kRelu,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus,
  };
  Kind kind = kSigmoid;
  float alpha = 0.0f;
  float beta = 0.0f;

  float operator()(float x) const {
    switch (kind) {
      case kSigmoid:
        return 1.0f / (1.0f + std::exp(-x));
      case kTanh:
        return std::tanh(x);
      case kRelu:
        return std::max(x, 0.0f);
      case kAffine:
        return alpha * x + beta;
      case kLeakyRelu:
        return x >= 0.0f ? x : alpha * x;
      case kThresholdedRelu:
        return x > alpha ? x : 0.0f;
      case kScaledTanh:
        return alpha * std::tanh(beta * x);
      case kHardSigmoid:
        return std::clamp(alpha * x + beta, 0.0f, 1.0f);
      case kElu:
        return x >= 0.0f ? x : alpha * (std::exp(x) - 1.0f);
      case kSoftsign:
        return x / (1.0f + std::fabs(x));
      case kSoftplus:
        return std::log1p(std::exp(x));
    }
    return x;
  }
};

struct ActivationName {
  std::string_view name;
  Activation::Kind kind;
  bool takes_alpha;
  bool takes_beta;
  float alpha;
  float beta;
};

constexpr ActivationName kActivations[] = {
    {"Sigmoid", Activation::kSigmoid, false, false, 0.0f, 0.0f},
    {"Tanh", Activation::kTanh, false, false, 0.0f, 0.0f},
    {"Relu", Activation::kRelu, false, false, 0.0f, 0.0f},
    {"Affine", Activation::kAffine, true, true, 1.0f, 0.0f},
    {"LeakyRelu", Activation::kLeakyRelu, true, false, 0.01f, 0.0f},
    {"ThresholdedRelu", Activation::kThresholdedRelu, true, false, 1.0f, 0.0f},
    {"ScaledTanh", Activation::kScaledTanh, true, true, 1.0f, 1.0f},
    {"HardSigmoid", Activation::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"Elu", Activation::kElu, true, false, 1.0f, 0.0f},
    {"Softsign", Activation::kSoftsign, false, false, 0.0f, 0.0f},
    {"Softplus", Activation::kSoftplus, false, false, 0.0f, 0.0f},
};

const ActivationName* find_activation(std::string_view name) {
  for (const ActivationName& entry : kActivations) {
    // ONNX's examples write the names in any case ("sigmoid", "Tanh").
    if (entry.name.size() == name.size() &&
        std::equal(name.begin(), name.end(), entry.name.begin(),
                   [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
      return &entry;
    }
  }
  return nullptr;
}

Cell cell_of(const Node& node) {
  if (node.op_type == "LSTM") return Cell::kLstm;
  if (node.op_type == "GRU") return Cell::kGru;
  return Cell::kRnn;
}

int gates_of(Cell cell) {
  switch (cell) {
    case Cell::kRnn:
      return 1;
    case Cell::kGru:
      return 3;
    case Cell::kLstm:
      return 4;
  }
  return 1;
}

// Activations per direction: RNN's f, GRU's f and g, LSTM's f, g and h.
int activations_per_direction(Cell cell) {
  return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3;
}

std::vector<std::string> default_activations(Cell cell) {
  switch (cell) {
    case Cell::kRnn:
      return {"Tanh"};
    case Cell::kGru:
      return {"Sigmoid", "Tanh"};
    case Cell::kLstm:
      return {"Sigmoid", "Tanh", "Tanh"};
  }
  return {};
}

int directions_of(const Node& node) {
  const std::string direction = node.attributes.get_string("direction", "forward");
  if (direction == "forward" || direction == "reverse") return 1;
  if (direction == "bidirectional") return 2;
  return 0;
}

// The activations of every direction, in order (forward's, then reverse's),
// each taking the next of activation_alpha / activation_beta if it uses one.
// A list of one direction's activations serves both directions.
std::vector<Activation> activations_of(const Node& node, Cell cell, int directions) {
  std::vector<std::string> names;
  if (node.attributes.has("activations")) names = node.attributes.get_strings("activations");
  const auto per_direction = static_cast<std::size_t>(activations_per_direction(cell));
  if (names.empty()) names = default_activations(cell);
  if (names.size() == per_direction && directions == 2) {
    const std::vector<std::string> forward = names;
    names.insert(names.end(), forward.begin(), forward.end());
  }
  if (names.size() != per_direction * static_cast<std::size_t>(directions)) {
    throw Error(fmt::format("{} activations given, {} expected", names.size(),
                            per_direction * static_cast<std::size_t>(directions)),
                {.node = node.name, .field = "activations"});
  }
  std::vector<float> alphas, betas;
  if (node.attributes.has("activation_alpha"))
    alphas = node.attributes.get_floats("activation_alpha");
  if (node.attributes.has("activation_beta")) betas = node.attributes.get_floats("activation_beta");
  std::size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> activations;
  for (const std::string& name : names) {
    const ActivationName* entry = find_activation(name);
    if (entry == nullptr) {
      throw Error(fmt::format("activation '{}' is not supported", name),
                  {.node = node.name, .field = "activations"});
    }
    Activation a{entry->kind, entry->alpha, entry->beta};
    if (entry->takes_alpha && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (entry->takes_beta && next_beta < betas.size()) a.beta = betas[next_beta++];
    activations.push_back(a);
  }
  return activations;
}

// The shapes every input and output must have, from X and R.
struct RecurrentShape {
  std::int64_t steps = 0, batch = 0, input = 0, hidden = 0;
  int directions = 1;
  bool batch_first = false;  // layout = 1
};

// Y's offset of (step, direction, batch entry) in units of `hidden`.
std::int64_t y_row(const RecurrentShape& s, std::int64_t t, int d, std::int64_t b) {
  return s.batch_first ? (b * s.steps + t) * s.directions + d
                       : (t * s.directions + d) * s.batch + b;
}

// Y_h's and Y_c's offset of (direction, batch entry) in units of `hidden`.
std::int64_t state_row(const RecurrentShape& s, int d, std::int64_t b) {
  return s.batch_first ? b * s.directions + d : d * s.batch + b;
}

Tensor* optional_output(const Node& node, std::span<Tensor> outputs, std::size_t i) {
  if (i >= node.outputs.size() || node.outputs[i] == kNoValue || outputs[i].empty()) {
    return nullptr;
  }
  return &outputs[i];
}

void expect_shape(const Tensor* tensor, const Shape& expected, const Node& node,
                  std::string_view field) {
  if (tensor != nullptr && tensor->shape() != expected) {
    throw Error(fmt::format("{} does not match the expected shape [{}]", tensor->type().to_string(),
                            fmt::join(expected, ",")),
                {.node = node.name, .field = std::string(field)});
  }
}

// One direction of one recurrent layer, over every batch entry.
class DirectionRun {
 public:
  DirectionRun(Cell cell, const RecurrentShape& shape, int direction, bool reverse,
               std::span<const Activation> activations, float clip, bool linear_before_reset,
               int threads)
      : cell_(cell),
        s_(shape),
        d_(direction),
        reverse_(reverse),
        act_(activations),
        clip_(clip),
        linear_before_reset_(linear_before_reset),
        threads_(threads),
        gates_(gates_of(cell)) {}

  // `x` is time-major [steps * batch, input]; w [gates * hidden, input], r
  // [gates * hidden, hidden], bias [2 * gates * hidden] or null, peephole
  // [3 * hidden] or null, h0/c0 [batch, hidden] or null; lengths per batch
  // entry.
  void run(const float* x, const float* w, const float* r, const float* bias, const float* peephole,
           const float* h0, const float* c0, std::span<const std::int64_t> lengths, float* y,
           float* y_h, float* y_c) {
    const std::int64_t hidden = s_.hidden, batch = s_.batch, width = gates_ * hidden;
    // The input's share of every gate at every step, with the biases that
    // do not depend on the hidden state.
    std::vector<float> input_bias(static_cast<std::size_t>(width), 0.0f);
    if (bias != nullptr) {
      for (std::int64_t j = 0; j < width; ++j) {
        const bool inside_reset = cell_ == Cell::kGru && linear_before_reset_ && j >= 2 * hidden;
        input_bias[j] = bias[j] + (inside_reset ? 0.0f : bias[width + j]);
      }
    }
    xw_.assign(static_cast<std::size_t>(s_.steps * batch * width), 0.0f);
    if (s_.steps * batch > 0) {
      sgemm(s_.steps * batch, width, s_.input, SgemmMatrix{x, s_.input, false},
            SgemmMatrix{w, s_.input, true},
            SgemmOutput{xw_.data(), width, 1.0f, 0.0f, nullptr, input_bias.data()}, threads_);
    }
    h_.assign(static_cast<std::size_t>(batch * hidden), 0.0f);
    c_.assign(h_.size(), 0.0f);
    if (h0 != nullptr) std::copy(h0, h0 + h_.size(), h_.begin());
    if (c0 != nullptr) std::copy(c0, c0 + c_.size(), c_.begin());
    hr_.assign(static_cast<std::size_t>(batch * width), 0.0f);
    if (cell_ == Cell::kGru) reset_h_.assign(h_.size(), 0.0f);
    // The bias of GRU's candidate gate inside the reset (linear_before_reset).
    const float* inner_bias = cell_ == Cell::kGru && linear_before_reset_ && bias != nullptr
                                  ? bias + width + 2 * hidden
                                  : nullptr;
    std::int64_t longest = 0;
    for (std::int64_t len : lengths) longest = std::max(longest, len);
    for (std::int64_t step = 0; step < longest; ++step) {
      recurrent_gemm(r, 0, cell_ == Cell::kGru && !linear_before_reset_ ? 2 : gates_, h_.data());
      for (std::int64_t b = 0; b < batch; ++b) {
        if (step >= lengths[b]) continue;
        const std::int64_t t = reverse_ ? lengths[b] - 1 - step : step;
        const float* in = xw_.data() + (t * batch + b) * width;
        float* hr = hr_.data() + b * width;
        float* h = h_.data() + b * hidden;
        float* c = c_.data() + b * hidden;
        switch (cell_) {
          case Cell::kRnn:
            for (std::int64_t j = 0; j < hidden; ++j) h[j] = act_[0](clipped(in[j] + hr[j]));
            break;
          case Cell::kLstm:
            lstm_step(in, hr, peephole, h, c);
            break;
          case Cell::kGru:
            gru_gates(in, hr, h, reset_h_.data() + b * hidden);
            break;
        }
      }
      if (cell_ == Cell::kGru) {
        if (!linear_before_reset_) recurrent_gemm(r, 2, 1, reset_h_.data());
        for (std::int64_t b = 0; b < batch; ++b) {
          if (step >= lengths[b]) continue;
          const std::int64_t t = reverse_ ? lengths[b] - 1 - step : step;
          gru_output(xw_.data() + (t * batch + b) * width, hr_.data() + b * width, inner_bias,
                     h_.data() + b * hidden);
        }
      }
      if (y != nullptr) {
        for (std::int64_t b = 0; b < batch; ++b) {
          if (step >= lengths[b]) continue;
          const std::int64_t t = reverse_ ? lengths[b] - 1 - step : step;
          std::copy_n(h_.data() + b * hidden, hidden, y + y_row(s_, t, d_, b) * hidden);
        }
      }
    }
    for (std::int64_t b = 0; b < batch; ++b) {
      if (y_h != nullptr)
        std::copy_n(h_.data() + b * hidden, hidden, y_h + state_row(s_, d_, b) * hidden);
      if (y_c != nullptr)
        std::copy_n(c_.data() + b * hidden, hidden, y_c + state_row(s_, d_, b) * hidden);
    }
  }

 private:
  float clipped(float v) const { return clip_ > 0.0f ? std::clamp(v, -clip_, clip_) : v; }

  // hr_[:, first gate .. first + count) = state * R[those gates]^T.
  void recurrent_gemm(const float* r, int first, int count, const float* state) {
    const std::int64_t hidden = s_.hidden, width = gates_ * hidden;
    sgemm(s_.batch, count * hidden, hidden, SgemmMatrix{state, hidden, false},
          SgemmMatrix{r + first * hidden * hidden, hidden, true},
          SgemmOutput{hr_.data() + first * hidden, width, 1.0f, 0.0f, nullptr, nullptr},
          loop_threads(count * hidden, s_.batch * hidden, threads_));
  }

  // Gates i, o, f, c in ONNX's order; peepholes i, o, f.
  void lstm_step(const float* in, const float* hr, const float* peephole, float* h, float* c) {
    const std::int64_t n = s_.hidden;
    const Activation &f = act_[0], &g = act_[1], &hact = act_[2];
    for (std::int64_t j = 0; j < n; ++j) {
      const float pi = peephole != nullptr ? peephole[j] * c[j] : 0.0f;
      const float pf = peephole != nullptr ? peephole[2 * n + j] * c[j] : 0.0f;
      const float i_gate = f(clipped(in[j] + hr[j] + pi));
      const float f_gate = f(clipped(in[2 * n + j] + hr[2 * n + j] + pf));
      const float cell = g(clipped(in[3 * n + j] + hr[3 * n + j]));
      c[j] = f_gate * c[j] + i_gate * cell;
      const float po = peephole != nullptr ? peephole[n + j] * c[j] : 0.0f;
      const float o_gate = f(clipped(in[n + j] + hr[n + j] + po));
      h[j] = o_gate * hact(c[j]);
    }
  }

  // GRU's update and reset gates (z, r, in ONNX's order z, r, h): z stays in
  // hr's z slot, r in its r slot; without linear_before_reset, r (.) H(t-1)
  // goes to `reset_h` for the candidate's GEMM.
  void gru_gates(const float* in, float* hr, const float* h, float* reset_h) {
    const std::int64_t n = s_.hidden;
    const Activation& f = act_[0];
    for (std::int64_t j = 0; j < n; ++j) {
      hr[j] = f(clipped(in[j] + hr[j]));
      hr[n + j] = f(clipped(in[n + j] + hr[n + j]));
      if (!linear_before_reset_) reset_h[j] = hr[n + j] * h[j];
    }
  }

  void gru_output(const float* in, const float* hr, const float* inner_bias, float* h) {
    const std::int64_t n = s_.hidden;
    const Activation& g = act_[1];
    for (std::int64_t j = 0; j < n; ++j) {
      const float z = hr[j], reset = hr[n + j];
      float recurrent = hr[2 * n + j];
      if (linear_before_reset_)
        recurrent = reset * (recurrent + (inner_bias ? inner_bias[j] : 0.0f));
      const float candidate = g(clipped(in[2 * n + j] + recurrent));
      h[j] = (1.0f - z) * candidate + z * h[j];
    }
  }

  Cell cell_;
  RecurrentShape s_;
  int d_;
  bool reverse_;
  std::span<const Activation> act_;
  float clip_;
  bool linear_before_reset_;
  int threads_;
  int gates_;
  std::vector<float> xw_, h_, c_, hr_, reset_h_;
};

// Input positions: X, W, R, B, sequence_lens, initial_h, then LSTM's
// initial_c and P.
constexpr std::size_t kX = 0, kW = 1, kR = 2, kB = 3, kLens = 4, kH0 = 5, kC0 = 6, kP = 7;

}  // namespace

void run_recurrent(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                   std::span<Tensor> outputs, int threads) {
  (void)graph;
  const Cell cell = cell_of(node);
  const int gates = gates_of(cell);
  const Tensor& x = inputs[kX];
  const Tensor& w = inputs[kW];
  const Tensor& r = inputs[kR];
  if (x.rank() != 3 || w.rank() != 3 || r.rank() != 3) {
    throw Error("X, W and R must be of rank 3", {.node = node.name});
  }
  RecurrentShape s;
  s.directions = directions_of(node);
  if (s.directions == 0)
    throw Error("unknown direction", {.node = node.name, .field = "direction"});
  s.batch_first = node.attributes.get_int("layout", 0) != 0;
  s.steps = x.shape()[s.batch_first ? 1 : 0];
  s.batch = x.shape()[s.batch_first ? 0 : 1];
  s.input = x.shape()[2];
  s.hidden = node.attributes.get_int("hidden_size", r.shape()[2]);
  const std::int64_t width = gates * s.hidden;
  expect_shape(&w, {s.directions, width, s.input}, node, "W");
  expect_shape(&r, {s.directions, width, s.hidden}, node, "R");
  const Tensor* bias = optional_input(inputs, kB);
  const Tensor* lens = optional_input(inputs, kLens);
  const Tensor* h0 = optional_input(inputs, kH0);
  const Tensor* c0 = cell == Cell::kLstm ? optional_input(inputs, kC0) : nullptr;
  const Tensor* peephole = cell == Cell::kLstm ? optional_input(inputs, kP) : nullptr;
  expect_shape(bias, {s.directions, 2 * width}, node, "B");
  expect_shape(lens, {s.batch}, node, "sequence_lens");
  const Shape state_shape = s.batch_first ? Shape{s.batch, s.directions, s.hidden}
                                          : Shape{s.directions, s.batch, s.hidden};
  expect_shape(h0, state_shape, node, "initial_h");
  expect_shape(c0, state_shape, node, "initial_c");
  expect_shape(peephole, {s.directions, 3 * s.hidden}, node, "P");
  Tensor* y = optional_output(node, outputs, 0);
  Tensor* y_h = optional_output(node, outputs, 1);
  Tensor* y_c = cell == Cell::kLstm ? optional_output(node, outputs, 2) : nullptr;
  expect_shape(y,
               s.batch_first ? Shape{s.batch, s.steps, s.directions, s.hidden}
                             : Shape{s.steps, s.directions, s.batch, s.hidden},
               node, "output Y");
  expect_shape(y_h, state_shape, node, "output Y_h");
  expect_shape(y_c, state_shape, node, "output Y_c");

  std::vector<std::int64_t> lengths(static_cast<std::size_t>(s.batch), s.steps);
  if (lens != nullptr) {
    for (std::int64_t b = 0; b < s.batch; ++b) {
      lengths[b] = lens->int_at(b);
      if (lengths[b] < 0 || lengths[b] > s.steps) {
        throw Error(fmt::format("sequence length {} of batch entry {} is outside [0, {}]",
                                lengths[b], b, s.steps),
                    {.node = node.name, .field = "sequence_lens"});
      }
    }
  }
  const std::vector<Activation> activations = activations_of(node, cell, s.directions);
  const auto per_direction = static_cast<std::size_t>(activations_per_direction(cell));
  const float clip = node.attributes.has("clip") ? node.attributes.get_float("clip") : 0.0f;
  const bool linear_before_reset = node.attributes.get_int("linear_before_reset", 0) != 0;
  const bool reverse_only = node.attributes.get_string("direction", "forward") == "reverse";

  // X time-major, and the initial states direction-major, as the runs read them.
  std::vector<float> x_time_major;
  const float* x_rows = x.data<float>();
  if (s.batch_first) {
    x_time_major.resize(static_cast<std::size_t>(x.numel()));
    for (std::int64_t b = 0; b < s.batch; ++b) {
      for (std::int64_t t = 0; t < s.steps; ++t) {
        std::copy_n(x_rows + (b * s.steps + t) * s.input, s.input,
                    x_time_major.data() + (t * s.batch + b) * s.input);
      }
    }
    x_rows = x_time_major.data();
  }
  auto state_of = [&](const Tensor* state, int d, std::vector<float>& scratch) -> const float* {
    if (state == nullptr) return nullptr;
    scratch.resize(static_cast<std::size_t>(s.batch * s.hidden));
    for (std::int64_t b = 0; b < s.batch; ++b) {
      std::copy_n(state->data<float>() + state_row(s, d, b) * s.hidden, s.hidden,
                  scratch.data() + b * s.hidden);
    }
    return scratch.data();
  };
  if (y != nullptr) std::fill_n(y->data<float>(), y->numel(), 0.0f);
  std::vector<float> h_scratch, c_scratch;
  for (int d = 0; d < s.directions; ++d) {
    const bool reverse = d == 1 || reverse_only;
    DirectionRun run(
        cell, s, d, reverse,
        std::span<const Activation>(activations).subspan(d * per_direction, per_direction), clip,
        linear_before_reset, threads);
    run.run(x_rows, w.data<float>() + d * width * s.input, r.data<float>() + d * width * s.hidden,
            bias != nullptr ? bias->data<float>() + d * 2 * width : nullptr,
            peephole != nullptr ? peephole->data<float>() + d * 3 * s.hidden : nullptr,
            state_of(h0, d, h_scratch), state_of(c0, d, c_scratch), lengths,
            y != nullptr ? y->data<float>() : nullptr,
            y_h != nullptr ? y_h->data<float>() : nullptr,
            y_c != nullptr ? y_c->data<float>() : nullptr);
  }
}

bool check_recurrent(const Graph& graph, const Node& node) {
  const Cell cell = cell_of(node);
  const std::size_t max_inputs = cell == Cell::kLstm ? 8 : 6;
  if (node.inputs.size() < 3 || node.inputs.size() > max_inputs || node.outputs.empty()) {
    return false;
  }
  for (std::size_t i : {kX, kW, kR}) {
    if (!is_float32(graph, node.input(i)) || graph.type(node.input(i)).rank() != 3) return false;
  }
  for (std::size_t i : {kB, kH0, kC0, kP}) {
    if (i < node.inputs.size() && node.inputs[i] != kNoValue &&
        !is_float32(graph, node.inputs[i])) {
      return false;
    }
  }
  if (kLens < node.inputs.size() && node.inputs[kLens] != kNoValue &&
      graph.type(node.inputs[kLens]).dtype != DType::kInt32) {
    return false;
  }
  for (ValueId output : node.outputs) {
    if (output != kNoValue && !is_float32(graph, output)) return false;
  }
  if (directions_of(node) == 0) return false;
  if (cell == Cell::kLstm && node.attributes.get_int("input_forget", 0) != 0) return false;
  try {
    activations_of(node, cell, directions_of(node));
  } catch (const Error&) {
    return false;
  }
  return true;
}

}  // namespace collage::native
