// The recurrent layers: RNN, GRU and LSTM.
//
// Each direction runs on its own. The input's contribution to every gate at
// every step is one GEMM over the whole sequence (X W^T plus the biases that
// do not depend on the hidden state); each step then adds the recurrent
// product H(t-1) R^T (for a small batch, a matrix-vector product per entry)
// and applies the gates, eight hidden units at a time. A batch entry with a shorter sequence
// (sequence_lens) stops early: its later outputs are zeros and its final
// state is the one after its last step; in the reverse direction it starts
// from its own last step.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "collage/backends/native/compute_kernels.h"
#include "collage/backends/native/recurrent_activations.h"
#include "collage/backends/native/sgemm.h"
#include "collage/backends/native/vector_math.h"
#include "collage/ir/error.h"
#include "collage/ir/recurrent.h"

namespace collage::native {
namespace {

enum class Cell { kRnn, kGru, kLstm };

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

int directions_of(const Node& node) {
  const std::string direction = node.attributes.get_string("direction", "forward");
  if (direction == "forward" || direction == "reverse") return 1;
  if (direction == "bidirectional") return 2;
  return 0;
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

// Multiply-adds per thread below which a step's product runs on one
// thread. A step waits for the one before it, so its team is woken again
// at every step, and the CLI lets idle OpenMP threads sleep almost at once
// (GOMP_SPINCOUNT, docs/threading.md): a wake-up costs tens of
// microseconds. A two-layer LSTM of 256 units over 32 steps ran 2.1 ms on
// one thread and 5.0 ms on two (512 units: 9.2 and 11.4 ms); 4M
// multiply-adds take about 100 us on one core.
constexpr std::int64_t kMinStepWorkPerThread = std::int64_t{4} << 20;

// Batches up to this size multiply the state by R as matrix-vector
// products: sgemm would pack all of R at every step, for one row of output.
constexpr std::int64_t kMatrixVectorBatch = 4;

float horizontal_sum(__m256 v) {
  const __m128 quad = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 pair = _mm_add_ps(quad, _mm_movehl_ps(quad, quad));
  return _mm_cvtss_f32(_mm_add_ss(pair, _mm_shuffle_ps(pair, pair, 1)));
}

// y[j] = sum_p a[j * k + p] x[p] for the n rows of a row-major matrix, four
// rows at a time so that each load of x serves four products. Rows are
// shared among the threads in blocks.
void matrix_vector(const float* a, std::int64_t n, std::int64_t k, const float* x, float* y,
                   int threads) {
  constexpr std::int64_t kRowsPerBlock = 32;
  const std::int64_t blocks = (n + kRowsPerBlock - 1) / kRowsPerBlock;
  const int team = loop_threads(blocks, kRowsPerBlock * k, threads);
#pragma omp parallel for num_threads(team) if (team > 1) schedule(static)
  for (std::int64_t block = 0; block < blocks; ++block) {
    const std::int64_t end = std::min(n, (block + 1) * kRowsPerBlock);
    std::int64_t j = block * kRowsPerBlock;
    for (; j + 4 <= end; j += 4) {
      const float* r0 = a + j * k;
      const float* r1 = r0 + k;
      const float* r2 = r1 + k;
      const float* r3 = r2 + k;
      __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
      std::int64_t p = 0;
      for (; p + 8 <= k; p += 8) {
        const __m256 v = _mm256_loadu_ps(x + p);
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + p), v, s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + p), v, s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + p), v, s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + p), v, s3);
      }
      float t0 = horizontal_sum(s0), t1 = horizontal_sum(s1), t2 = horizontal_sum(s2),
            t3 = horizontal_sum(s3);
      for (; p < k; ++p) {
        t0 += r0[p] * x[p];
        t1 += r1[p] * x[p];
        t2 += r2[p] * x[p];
        t3 += r3[p] * x[p];
      }
      y[j] = t0;
      y[j + 1] = t1;
      y[j + 2] = t2;
      y[j + 3] = t3;
    }
    for (; j < end; ++j) {
      float t = 0.0f;
      for (std::int64_t p = 0; p < k; ++p) t += a[j * k + p] * x[p];
      y[j] = t;
    }
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
    // Computed as W X^T, [width, steps * batch], then transposed: sgemm
    // packs its right-hand operand, and X is the small one.
    const std::int64_t rows = s_.steps * batch;
    grow(xw_, rows * width);
    if (rows > 0) {
      float* transposed = grow(scratch_.transposed, rows * width);
      sgemm(width, rows, s_.input, SgemmMatrix{w, s_.input, false}, SgemmMatrix{x, s_.input, true},
            SgemmOutput{transposed, rows, 1.0f, 0.0f, input_bias.data(), nullptr}, threads_);
      // Row by row of the result: written in order, read down columns of a
      // block that stays in cache (writing down the columns of xw_, a
      // whole page apart, would miss at every store).
      for (std::int64_t i = 0; i < rows; ++i) {
        float* row = xw_.data() + i * width;
        for (std::int64_t j = 0; j < width; ++j) row[j] = transposed[j * rows + i];
      }
    }
    const std::int64_t states = batch * hidden;
    std::fill_n(grow(h_, states), states, 0.0f);
    std::fill_n(grow(c_, states), states, 0.0f);
    if (h0 != nullptr) std::copy_n(h0, states, h_.data());
    if (c0 != nullptr) std::copy_n(c0, states, c_.data());
    grow(hr_, batch * width);
    if (cell_ == Cell::kGru) grow(reset_h_, states);
    grow(gate_, 3 * hidden);
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
            rnn_step(in, hr, h);
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
  // hr_[:, first gate .. first + count) = state * R[those gates]^T.
  void recurrent_gemm(const float* r, int first, int count, const float* state) {
    const std::int64_t hidden = s_.hidden, width = gates_ * hidden;
    const float* rows = r + first * hidden * hidden;
    float* out = hr_.data() + first * hidden;
    const std::int64_t work = s_.batch * count * hidden * hidden;
    const int team = work >= kMinStepWorkPerThread * 2 ? threads_ : 1;
    if (s_.batch <= kMatrixVectorBatch) {
      for (std::int64_t b = 0; b < s_.batch; ++b) {
        matrix_vector(rows, count * hidden, hidden, state + b * hidden, out + b * width, team);
      }
      return;
    }
    sgemm(s_.batch, count * hidden, hidden, SgemmMatrix{state, hidden, false},
          SgemmMatrix{rows, hidden, true}, SgemmOutput{out, width, 1.0f, 0.0f, nullptr, nullptr},
          team);
  }

  // Gates i, o, f, c in ONNX's order; peepholes i, o, f. The gates are
  // computed a pass at a time over the hidden units, so that the
  // activations run eight units at once.
  void lstm_step(const float* in, const float* hr, const float* peephole, float* h, float* c) {
    const std::int64_t n = s_.hidden;
    float* input_gate = gate_.data();
    float* forget_gate = input_gate + n;
    float* cell = forget_gate + n;
    for (std::int64_t j = 0; j < n; ++j) {
      input_gate[j] = in[j] + hr[j];
      forget_gate[j] = in[2 * n + j] + hr[2 * n + j];
      cell[j] = in[3 * n + j] + hr[3 * n + j];
    }
    if (peephole != nullptr) {
      for (std::int64_t j = 0; j < n; ++j) {
        input_gate[j] += peephole[j] * c[j];
        forget_gate[j] += peephole[2 * n + j] * c[j];
      }
    }
    activate(act_[0], clip_, input_gate, 2 * n);
    activate(act_[1], clip_, cell, n);
    for (std::int64_t j = 0; j < n; ++j) c[j] = forget_gate[j] * c[j] + input_gate[j] * cell[j];
    float* output_gate = input_gate;
    float* cell_out = forget_gate;
    for (std::int64_t j = 0; j < n; ++j) {
      output_gate[j] =
          in[n + j] + hr[n + j] + (peephole != nullptr ? peephole[n + j] * c[j] : 0.0f);
      cell_out[j] = c[j];
    }
    activate(act_[0], clip_, output_gate, n);
    activate(act_[2], 0.0f, cell_out, n);
    for (std::int64_t j = 0; j < n; ++j) h[j] = output_gate[j] * cell_out[j];
  }

  void rnn_step(const float* in, const float* hr, float* h) {
    for (std::int64_t j = 0; j < s_.hidden; ++j) h[j] = in[j] + hr[j];
    activate(act_[0], clip_, h, s_.hidden);
  }

  // GRU's update and reset gates (z, r, in ONNX's order z, r, h): z stays in
  // hr's z slot, r in its r slot; without linear_before_reset, r (.) H(t-1)
  // goes to `reset_h` for the candidate's GEMM.
  void gru_gates(const float* in, float* hr, const float* h, float* reset_h) {
    const std::int64_t n = s_.hidden;
    for (std::int64_t j = 0; j < 2 * n; ++j) hr[j] += in[j];
    activate(act_[0], clip_, hr, 2 * n);
    if (!linear_before_reset_) {
      for (std::int64_t j = 0; j < n; ++j) reset_h[j] = hr[n + j] * h[j];
    }
  }

  void gru_output(const float* in, const float* hr, const float* inner_bias, float* h) {
    const std::int64_t n = s_.hidden;
    float* candidate = gate_.data();
    for (std::int64_t j = 0; j < n; ++j) {
      float recurrent = hr[2 * n + j];
      if (linear_before_reset_) {
        recurrent = hr[n + j] * (recurrent + (inner_bias != nullptr ? inner_bias[j] : 0.0f));
      }
      candidate[j] = in[2 * n + j] + recurrent;
    }
    activate(act_[1], clip_, candidate, n);
    for (std::int64_t j = 0; j < n; ++j) h[j] = (1.0f - hr[j]) * candidate[j] + hr[j] * h[j];
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
  // Scratch kept per thread between calls and only ever grown, like
  // sgemm's packing buffers: a sequence's buffers of a few hundred KiB,
  // allocated at every call, were mapped and faulted in at every call.
  struct Scratch {
    std::vector<float> xw, transposed, h, c, hr, reset_h, gate;
  };
  static Scratch& thread_scratch() {
    thread_local Scratch scratch;
    return scratch;
  }
  static float* grow(std::vector<float>& buffer, std::int64_t size) {
    if (buffer.size() < static_cast<std::size_t>(size))
      buffer.resize(static_cast<std::size_t>(size));
    return buffer.data();
  }
  Scratch& scratch_ = thread_scratch();
  std::vector<float>& xw_ = scratch_.xw;
  std::vector<float>& h_ = scratch_.h;
  std::vector<float>& c_ = scratch_.c;
  std::vector<float>& hr_ = scratch_.hr;
  std::vector<float>& reset_h_ = scratch_.reset_h;
  std::vector<float>& gate_ = scratch_.gate;
};

// Input positions: X, W, R, B, sequence_lens, initial_h, then LSTM's
// initial_c and P.
constexpr std::size_t kX = 0, kW = 1, kR = 2, kB = 3, kLens = 4, kH0 = 5, kC0 = 6, kP = 7;

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
  const std::vector<Activation> activations = activations_of(node, s.directions);
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
  // Each direction's initial states as [batch, hidden].
  auto states_of = [&](const Tensor* state) {
    std::vector<std::vector<float>> per_direction(static_cast<std::size_t>(s.directions));
    if (state == nullptr) return per_direction;
    for (int d = 0; d < s.directions; ++d) {
      std::vector<float>& rows = per_direction[static_cast<std::size_t>(d)];
      rows.resize(static_cast<std::size_t>(s.batch * s.hidden));
      for (std::int64_t b = 0; b < s.batch; ++b) {
        std::copy_n(state->data<float>() + state_row(s, d, b) * s.hidden, s.hidden,
                    rows.data() + b * s.hidden);
      }
    }
    return per_direction;
  };
  const std::vector<std::vector<float>> h_states = states_of(h0), c_states = states_of(c0);
  if (y != nullptr) std::fill_n(y->data<float>(), y->numel(), 0.0f);
  // Two directions run side by side on two threads, each with half the
  // team: the steps of one direction depend on each other, the directions
  // do not, and a team per step would wake its threads at every step.
  const int side_by_side = s.directions == 2 && threads >= 2 ? 2 : 1;
  const int direction_threads = std::max(1, threads / side_by_side);
  auto run_direction = [&](int d) {
    const auto at = static_cast<std::size_t>(d);
    const bool reverse = d == 1 || reverse_only;
    DirectionRun run(
        cell, s, d, reverse,
        std::span<const Activation>(activations).subspan(d * per_direction, per_direction), clip,
        linear_before_reset, direction_threads);
    run.run(x_rows, w.data<float>() + d * width * s.input, r.data<float>() + d * width * s.hidden,
            bias != nullptr ? bias->data<float>() + d * 2 * width : nullptr,
            peephole != nullptr ? peephole->data<float>() + d * 3 * s.hidden : nullptr,
            h_states[at].empty() ? nullptr : h_states[at].data(),
            c_states[at].empty() ? nullptr : c_states[at].data(), lengths,
            y != nullptr ? y->data<float>() : nullptr,
            y_h != nullptr ? y_h->data<float>() : nullptr,
            y_c != nullptr ? y_c->data<float>() : nullptr);
  };
  // One direction runs outside any parallel region. Inside one, even one
  // its `if` clause leaves inactive, the products' own teams would be
  // nested teams, which libgomp starts on new threads beside its idle
  // pool: a third thread on two cores, against a pool worker that spins
  // (Silero v5 ran 4.0 ms where it runs 0.2 ms at 2 threads).
  if (side_by_side == 1) {
    for (int d = 0; d < s.directions; ++d) run_direction(d);
    return;
  }
#pragma omp parallel for num_threads(side_by_side) schedule(static, 1)
  for (int d = 0; d < s.directions; ++d) run_direction(d);
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
    activations_of(node, directions_of(node));
  } catch (const Error&) {
    return false;
  }
  return true;
}

constexpr OpEntry kRecurrentOps[] = {
    {"RNN", run_recurrent, check_recurrent},
    {"GRU", run_recurrent, check_recurrent},
    {"LSTM", run_recurrent, check_recurrent},
};

}  // namespace

std::span<const OpEntry> recurrent_ops() { return kRecurrentOps; }

}  // namespace collage::native
