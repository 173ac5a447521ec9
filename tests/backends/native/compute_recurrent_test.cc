// RNN, GRU and LSTM against ONNX's equations written out per element, in
// double precision, one time step and one batch entry at a time.
#include <cmath>
#include <string>
#include <vector>

#include "backends/native/compute_op_harness.h"

namespace collage::native_test {
namespace {

struct RecurrentCase {
  std::string op;
  std::int64_t steps = 5, batch = 3, input = 4, hidden = 6;
  std::string direction = "forward";
  bool batch_first = false;
  bool bias = true;
  bool initial_state = true;
  bool peepholes = false;
  std::vector<std::int32_t> lengths;  // empty: every entry runs all steps
  bool linear_before_reset = false;
  float clip = 0.0f;
  // Activation names per direction, ONNX's defaults when empty.
  std::vector<std::string> activations;
  int threads = 2;
};

int gates(const std::string& op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }

double activate(const std::string& name, double x) {
  if (name == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (name == "Tanh") return std::tanh(x);
  if (name == "Relu") return std::max(x, 0.0);
  if (name == "HardSigmoid") return std::clamp(0.2 * x + 0.5, 0.0, 1.0);
  ADD_FAILURE() << "the test has no activation " << name;
  return 0.0;
}

struct Expected {
  std::vector<float> y, y_h, y_c;
};

// ONNX's equations (operator docs of RNN, GRU and LSTM), element by element.
Expected reference(const RecurrentCase& rc, const std::vector<Tensor>& in,
                   const std::vector<std::string>& acts) {
  const int g = gates(rc.op);
  const int dirs = rc.direction == "bidirectional" ? 2 : 1;
  const std::int64_t S = rc.steps, B = rc.batch, I = rc.input, H = rc.hidden;
  const float* x = in[0].data<float>();
  const float* w = in[1].data<float>();
  const float* r = in[2].data<float>();
  const float* bias = in[3].empty() ? nullptr : in[3].data<float>();
  const float* h0 = in[5].empty() ? nullptr : in[5].data<float>();
  const float* c0 = in.size() > 6 && !in[6].empty() ? in[6].data<float>() : nullptr;
  const float* p = in.size() > 7 && !in[7].empty() ? in[7].data<float>() : nullptr;
  auto x_at = [&](std::int64_t t, std::int64_t b, std::int64_t i) {
    return rc.batch_first ? x[(b * S + t) * I + i] : x[(t * B + b) * I + i];
  };
  auto state_at = [&](std::int64_t d, std::int64_t b) {
    return rc.batch_first ? (b * dirs + d) * H : (d * B + b) * H;
  };
  auto y_at = [&](std::int64_t t, std::int64_t d, std::int64_t b) {
    return rc.batch_first ? ((b * S + t) * dirs + d) * H : ((t * dirs + d) * B + b) * H;
  };
  Expected e;
  e.y.assign(static_cast<std::size_t>(S * dirs * B * H), 0.0f);
  e.y_h.assign(static_cast<std::size_t>(dirs * B * H), 0.0f);
  e.y_c = e.y_h;
  const std::size_t per_dir = acts.size() / static_cast<std::size_t>(dirs);
  auto clip = [&](double v) { return rc.clip > 0 ? std::clamp<double>(v, -rc.clip, rc.clip) : v; };
  for (int d = 0; d < dirs; ++d) {
    const bool reverse = d == 1 || rc.direction == "reverse";
    const float* wd = w + d * g * H * I;
    const float* rd = r + d * g * H * H;
    const float* wb = bias ? bias + d * 2 * g * H : nullptr;
    const float* rb = bias ? wb + g * H : nullptr;
    const std::string* f = &acts[d * per_dir];
    for (std::int64_t b = 0; b < B; ++b) {
      const std::int64_t len = rc.lengths.empty() ? S : rc.lengths[b];
      std::vector<double> h(H, 0.0), c(H, 0.0);
      for (std::int64_t j = 0; j < H; ++j) {
        if (h0) h[j] = h0[state_at(d, b) + j];
        if (c0) c[j] = c0[state_at(d, b) + j];
      }
      // Gate k's input part and recurrent part (with their biases).
      auto xw = [&](std::int64_t t, int k, std::int64_t j) {
        double v = wb ? wb[k * H + j] : 0.0;
        for (std::int64_t i = 0; i < I; ++i) v += x_at(t, b, i) * wd[(k * H + j) * I + i];
        return v;
      };
      auto hr = [&](const std::vector<double>& state, int k, std::int64_t j) {
        double v = rb ? rb[k * H + j] : 0.0;
        for (std::int64_t i = 0; i < H; ++i) v += state[i] * rd[(k * H + j) * H + i];
        return v;
      };
      for (std::int64_t step = 0; step < len; ++step) {
        const std::int64_t t = reverse ? len - 1 - step : step;
        std::vector<double> next(H);
        if (rc.op == "RNN") {
          for (std::int64_t j = 0; j < H; ++j)
            next[j] = activate(f[0], clip(xw(t, 0, j) + hr(h, 0, j)));
        } else if (rc.op == "GRU") {
          std::vector<double> z(H), reset(H), rh(H);
          for (std::int64_t j = 0; j < H; ++j) {
            z[j] = activate(f[0], clip(xw(t, 0, j) + hr(h, 0, j)));
            reset[j] = activate(f[0], clip(xw(t, 1, j) + hr(h, 1, j)));
            rh[j] = reset[j] * h[j];
          }
          for (std::int64_t j = 0; j < H; ++j) {
            const double candidate = rc.linear_before_reset ? xw(t, 2, j) + reset[j] * hr(h, 2, j)
                                                            : xw(t, 2, j) + hr(rh, 2, j);
            next[j] = (1 - z[j]) * activate(f[1], clip(candidate)) + z[j] * h[j];
          }
        } else {
          for (std::int64_t j = 0; j < H; ++j) {
            const double pi = p ? p[d * 3 * H + j] * c[j] : 0.0;
            const double pf = p ? p[d * 3 * H + 2 * H + j] * c[j] : 0.0;
            const double ig = activate(f[0], clip(xw(t, 0, j) + hr(h, 0, j) + pi));
            const double fg = activate(f[0], clip(xw(t, 2, j) + hr(h, 2, j) + pf));
            const double cell = activate(f[1], clip(xw(t, 3, j) + hr(h, 3, j)));
            c[j] = fg * c[j] + ig * cell;
            const double po = p ? p[d * 3 * H + H + j] * c[j] : 0.0;
            const double og = activate(f[0], clip(xw(t, 1, j) + hr(h, 1, j) + po));
            next[j] = og * activate(f[2], c[j]);
          }
        }
        h = next;
        for (std::int64_t j = 0; j < H; ++j) e.y[y_at(t, d, b) + j] = static_cast<float>(h[j]);
      }
      for (std::int64_t j = 0; j < H; ++j) {
        e.y_h[state_at(d, b) + j] = static_cast<float>(h[j]);
        e.y_c[state_at(d, b) + j] = static_cast<float>(c[j]);
      }
    }
  }
  return e;
}

std::vector<std::string> default_activations(const std::string& op) {
  if (op == "RNN") return {"Tanh"};
  if (op == "GRU") return {"Sigmoid", "Tanh"};
  return {"Sigmoid", "Tanh", "Tanh"};
}

// Runs the case through the native entry and compares Y, Y_h (and Y_c).
void check(const RecurrentCase& rc) {
  const int g = gates(rc.op);
  const std::int64_t dirs = rc.direction == "bidirectional" ? 2 : 1;
  const std::int64_t S = rc.steps, B = rc.batch, I = rc.input, H = rc.hidden;
  std::vector<Tensor> in;
  in.push_back(random_tensor(rc.batch_first ? Shape{B, S, I} : Shape{S, B, I}, 11));
  in.push_back(random_tensor({dirs, g * H, I}, 12, -0.5f, 0.5f));
  in.push_back(random_tensor({dirs, g * H, H}, 13, -0.5f, 0.5f));
  in.push_back(rc.bias ? random_tensor({dirs, 2 * g * H}, 14, -0.5f, 0.5f) : Tensor());
  in.push_back(rc.lengths.empty() ? Tensor() : Tensor::from_vector<std::int32_t>(rc.lengths, {B}));
  const Shape state = rc.batch_first ? Shape{B, dirs, H} : Shape{dirs, B, H};
  in.push_back(rc.initial_state ? random_tensor(state, 15) : Tensor());
  if (rc.op == "LSTM") {
    in.push_back(rc.initial_state ? random_tensor(state, 16) : Tensor());
    in.push_back(rc.peepholes ? random_tensor({dirs, 3 * H}, 17, -0.5f, 0.5f) : Tensor());
  }
  while (!in.empty() && in.back().empty()) in.pop_back();
  Attributes attributes;
  attributes.set("hidden_size", H);
  attributes.set("direction", rc.direction);
  if (rc.batch_first) attributes.set("layout", std::int64_t{1});
  if (rc.linear_before_reset) attributes.set("linear_before_reset", std::int64_t{1});
  if (rc.clip > 0) attributes.set("clip", rc.clip);
  std::vector<std::string> acts = rc.activations;
  if (!acts.empty()) attributes.set("activations", acts);
  if (acts.empty()) acts = default_activations(rc.op);
  if (acts.size() == default_activations(rc.op).size() && dirs == 2) {
    const std::vector<std::string> forward = acts;
    acts.insert(acts.end(), forward.begin(), forward.end());
  }
  std::vector<TensorType> outputs = {
      f32_type(rc.batch_first ? Shape{B, S, dirs, H} : Shape{S, dirs, B, H}), f32_type(state)};
  if (rc.op == "LSTM") outputs.push_back(f32_type(state));
  ComputeCase c{rc.op, in, outputs, attributes, 14};
  c.threads = rc.threads;
  const std::vector<Tensor> got = c.run();
  std::vector<Tensor> padded = in;
  padded.resize(8);
  const Expected want = reference(rc, padded, acts);
  {
    SCOPED_TRACE("Y");
    expect_close(got[0], want.y, 1e-5f);
  }
  {
    SCOPED_TRACE("Y_h");
    expect_close(got[1], want.y_h, 1e-5f);
  }
  if (rc.op == "LSTM") {
    SCOPED_TRACE("Y_c");
    expect_close(got[2], want.y_c, 1e-5f);
  }
}

TEST(RecurrentTest, LstmMatchesItsEquationsInEveryDirection) {
  for (const std::string direction : {"forward", "reverse", "bidirectional"}) {
    SCOPED_TRACE(direction);
    RecurrentCase rc{.op = "LSTM", .direction = direction, .peepholes = true};
    check(rc);
  }
}

// A batch of more than four entries multiplies by R with one GEMM a step
// instead of a matrix-vector product per entry; hidden sizes that are not
// multiples of eight leave tails to the scalar loops.
TEST(RecurrentTest, LargeBatchesAndOddHiddenSizesMatchToo) {
  for (const std::string op : {"RNN", "GRU", "LSTM"}) {
    SCOPED_TRACE(op);
    check(RecurrentCase{.op = op,
                        .batch = 7,
                        .hidden = 13,
                        .direction = "bidirectional",
                        .peepholes = op == "LSTM",
                        .lengths = {5, 1, 4, 5, 0, 3, 2}});
    check(RecurrentCase{.op = op, .batch = 2, .hidden = 21, .lengths = {4, 5}});
  }
}

TEST(RecurrentTest, ShorterSequencesStopEarlyAndReverseFromTheirOwnEnd) {
  for (const std::string op : {"RNN", "GRU", "LSTM"}) {
    SCOPED_TRACE(op);
    check(RecurrentCase{.op = op, .direction = "bidirectional", .lengths = {5, 2, 0}});
  }
}

TEST(RecurrentTest, BatchFirstLayoutReadsAndWritesEveryTensorBatchMajor) {
  for (const std::string op : {"RNN", "GRU", "LSTM"}) {
    SCOPED_TRACE(op);
    check(RecurrentCase{
        .op = op, .direction = "bidirectional", .batch_first = true, .lengths = {3, 5, 1}});
  }
}

TEST(RecurrentTest, GruAppliesTheResetBeforeOrAfterTheRecurrentProduct) {
  for (bool linear_before_reset : {false, true}) {
    SCOPED_TRACE(linear_before_reset ? "linear before reset" : "reset before linear");
    check(RecurrentCase{
        .op = "GRU", .direction = "bidirectional", .linear_before_reset = linear_before_reset});
  }
}

TEST(RecurrentTest, WithoutBiasOrInitialStateAndWithOneStepAndOneThread) {
  for (const std::string op : {"RNN", "GRU", "LSTM"}) {
    SCOPED_TRACE(op);
    check(RecurrentCase{
        .op = op, .steps = 1, .batch = 1, .bias = false, .initial_state = false, .threads = 1});
  }
}

TEST(RecurrentTest, NamedActivationsAndClipApplyToTheGates) {
  check(RecurrentCase{.op = "RNN", .clip = 0.3f, .activations = {"Relu"}});
  check(RecurrentCase{.op = "GRU",
                      .direction = "bidirectional",
                      .clip = 0.5f,
                      .activations = {"HardSigmoid", "Tanh", "Sigmoid", "Relu"}});
  check(RecurrentCase{.op = "LSTM", .clip = 0.5f, .activations = {"HardSigmoid", "Relu", "Tanh"}});
}

TEST(RecurrentTest, WhatTheKernelDoesNotComputeIsUnsupportedNotWrong) {
  const Shape x{2, 1, 3};
  auto lstm = [&](Attributes attributes) {
    attributes.set("hidden_size", std::int64_t{2});
    return ComputeCase{
        "LSTM",
        {random_tensor(x, 1), random_tensor({1, 8, 3}, 2), random_tensor({1, 8, 2}, 3)},
        {f32_type({2, 1, 1, 2})},
        attributes};
  };
  EXPECT_TRUE(lstm({}).supported());
  Attributes coupled;
  coupled.set("input_forget", std::int64_t{1});
  EXPECT_FALSE(lstm(coupled).supported());
  Attributes unknown;
  unknown.set("activations", std::vector<std::string>{"Sigmoid", "Gelu", "Tanh"});
  EXPECT_FALSE(lstm(unknown).supported());
  Attributes direction;
  direction.set("direction", std::string("sideways"));
  EXPECT_FALSE(lstm(direction).supported());
}

TEST(RecurrentTest, ASequenceLengthPastTheInputIsAnError) {
  ComputeCase c{
      "RNN",
      {random_tensor({2, 1, 3}, 1), random_tensor({1, 2, 3}, 2), random_tensor({1, 2, 2}, 3),
       Tensor(), Tensor::from_vector<std::int32_t>({3}, {1})},
      {f32_type({2, 1, 1, 2})},
      {}};
  c.attributes.set("hidden_size", std::int64_t{2});
  EXPECT_THROW(c.run(), Error);
}

// Hardmax: a one at the first largest element of each line.
TEST(HardmaxTest, MarksTheFirstLargestOfEachLineOnEveryAxis) {
  Tensor x = random_tensor({3, 4, 5}, 21, 0.0f, 3.0f);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::floor(x.data<float>()[i]);
  const Shape& shape = x.shape();
  for (int axis : {0, 1, 2}) {
    SCOPED_TRACE(axis);
    Attributes attributes;
    attributes.set("axis", std::int64_t{axis == 2 ? -1 : axis});
    ComputeCase c{"Hardmax", {x}, {f32_type(shape)}, attributes};
    c.threads = 2;
    const Tensor got = c.run_one();
    std::int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= shape[d];
    for (int d = axis + 1; d < 3; ++d) inner *= shape[d];
    const std::int64_t n = shape[axis];
    std::vector<float> want(static_cast<std::size_t>(x.numel()), 0.0f);
    for (std::int64_t o = 0; o < outer; ++o) {
      for (std::int64_t i = 0; i < inner; ++i) {
        std::int64_t best = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          if (x.data<float>()[(o * n + j) * inner + i] >
              x.data<float>()[(o * n + best) * inner + i]) {
            best = j;
          }
        }
        want[(o * n + best) * inner + i] = 1.0f;
      }
    }
    expect_close(got, want, 0.0f);
  }
}

TEST(HardmaxTest, BeforeOpset13TheLineIsEveryAxisFromAxisOn) {
  Attributes attributes;
  attributes.set("axis", std::int64_t{1});
  ComputeCase c{"Hardmax",
                {f32_tensor({2, 2, 2}, {1, 5, 7, 2, 9, 0, 3, 9})},
                {f32_type({2, 2, 2})},
                attributes,
                11};
  expect_close(c.run_one(), {0, 0, 1, 0, 1, 0, 0, 0}, 0.0f);
}

}  // namespace
}  // namespace collage::native_test
