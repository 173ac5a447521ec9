// The Reduce* family, ArgMax, ArgMin, Hardmax and TopK.
//
// A reduction is described by what it does to each element (map: x, x^2,
// |x|), how it combines (add, max, min, multiply) and how it finishes (the
// mean divides, L2 takes a square root, LogSum and LogSumExp take a log). Dimensions
// of size 1 are irrelevant and neighbouring dimensions of the same kind
// (kept or reduced) merge, so most reductions become [outer, reduced, inner]:
// reducing a contiguous run (inner == 1) or combining whole rows (inner >
// 1), both of which vectorize and parallelize over the outer dimension. Any
// other pattern (several separate runs of reduced axes) walks the input
// once with an odometer and accumulates into the output.
//
// Axes come from the `axes` attribute, or from the second input where the
// opset moved them there (ReduceSum from 13, the others from 18); an empty
// list reduces everything unless noop_with_empty_axes asks for a copy.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "collage/backends/native/compute_kernels.h"
#include "collage/ir/error.h"

namespace collage::native {
namespace {

enum class Reduction { kSum, kMean, kMax, kMin, kProd, kSumSquare, kL1, kL2, kLogSum, kLogSumExp };

template <Reduction r>
constexpr float reduce_init() {
  if constexpr (r == Reduction::kMax || r == Reduction::kLogSumExp) {
    return -std::numeric_limits<float>::infinity();
  } else if constexpr (r == Reduction::kMin) {
    return std::numeric_limits<float>::infinity();
  } else if constexpr (r == Reduction::kProd) {
    return 1.0f;
  } else {
    return 0.0f;
  }
}

// The value an element contributes (LogSumExp's first pass is a max).
template <Reduction r>
inline float reduce_map(float x) {
  if constexpr (r == Reduction::kSumSquare || r == Reduction::kL2) {
    return x * x;
  } else if constexpr (r == Reduction::kL1) {
    return std::fabs(x);
  } else {
    return x;
  }
}

template <Reduction r>
inline float reduce_combine(float acc, float value) {
  if constexpr (r == Reduction::kMax || r == Reduction::kLogSumExp) {
    return std::max(acc, value);
  } else if constexpr (r == Reduction::kMin) {
    return std::min(acc, value);
  } else if constexpr (r == Reduction::kProd) {
    return acc * value;
  } else {
    return acc + value;
  }
}

template <Reduction r>
inline float reduce_finish(float acc, std::int64_t count) {
  if constexpr (r == Reduction::kMean) {
    return acc / static_cast<float>(count);
  } else if constexpr (r == Reduction::kL2) {
    return std::sqrt(acc);
  } else if constexpr (r == Reduction::kLogSum) {
    return std::log(acc);
  } else {
    return acc;
  }
}

// LogSumExp of values whose maximum is `max`, from sum(exp(x - max)).
inline float log_sum_exp_finish(float max, float shifted_sum) {
  if (std::isinf(max)) return max;
  return max + std::log(shifted_sum);
}

// Combines `count` contiguous values into `acc` with 16 independent lanes.
template <Reduction r>
float reduce_contiguous(const float* x, std::int64_t count) {
  constexpr int kLanes = 16;
  float lanes[kLanes];
  std::fill(lanes, lanes + kLanes, reduce_init<r>());
  std::int64_t i = 0;
  for (; i + kLanes <= count; i += kLanes) {
#pragma omp simd
    for (int l = 0; l < kLanes; ++l)
      lanes[l] = reduce_combine<r>(lanes[l], reduce_map<r>(x[i + l]));
  }
  float acc = reduce_init<r>();
  for (int l = 0; l < kLanes; ++l) acc = reduce_combine<r>(acc, lanes[l]);
  for (; i < count; ++i) acc = reduce_combine<r>(acc, reduce_map<r>(x[i]));
  return acc;
}

// The tensor as alternating runs of kept and reduced dimensions.
struct ReduceLayout {
  Shape sizes;
  std::vector<bool> reduced;
  std::int64_t reduced_count = 1;  // elements combined into each output
};

ReduceLayout reduce_layout(const Shape& shape, const std::vector<bool>& reduced_axes) {
  ReduceLayout layout;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (reduced_axes[d]) layout.reduced_count *= shape[d];
    if (shape[d] == 1) continue;
    if (!layout.sizes.empty() && layout.reduced.back() == reduced_axes[d]) {
      layout.sizes.back() *= shape[d];
      continue;
    }
    layout.sizes.push_back(shape[d]);
    layout.reduced.push_back(reduced_axes[d]);
  }
  return layout;
}

// Which axes to reduce; nullopt-like empty vector means "copy" (noop).
struct AxesChoice {
  std::vector<bool> reduced;
  bool noop = false;
};

AxesChoice reduce_axes(const Node& node, std::span<const Tensor> inputs, int rank) {
  std::vector<std::int64_t> axes;
  if (const Tensor* axes_input = optional_input(inputs, 1)) {
    for (std::int64_t i = 0; i < axes_input->numel(); ++i) axes.push_back(axes_input->int_at(i));
  } else if (node.attributes.has("axes")) {
    axes = node.attributes.get_ints("axes");
  }
  AxesChoice choice;
  choice.reduced.assign(static_cast<std::size_t>(rank), axes.empty());
  if (axes.empty()) {
    choice.noop = node.attributes.get_int("noop_with_empty_axes", 0) != 0;
    return choice;
  }
  for (std::int64_t axis : axes) {
    const int a = normalize_axis(axis, rank, node, "axes");
    if (choice.reduced[static_cast<std::size_t>(a)]) {
      throw Error(fmt::format("axis {} is repeated", axis), {.node = node.name, .field = "axes"});
    }
    choice.reduced[static_cast<std::size_t>(a)] = true;
  }
  return choice;
}

// [outer, length, inner] with the middle dimension reduced.
template <Reduction r>
void reduce_middle(const float* x, float* y, std::int64_t outer, std::int64_t length,
                   std::int64_t inner, std::int64_t count, int threads) {
  if (inner == 1) {
#pragma omp parallel for num_threads(loop_threads(outer, length, threads)) schedule(static)
    for (std::int64_t o = 0; o < outer; ++o) {
      const float* row = x + o * length;
      if constexpr (r == Reduction::kLogSumExp) {
        const float max = row_max(row, length);
        y[o] = log_sum_exp_finish(max, std::isinf(max) ? 0.0f : sum_exp_shifted(row, max, length));
      } else {
        y[o] = reduce_finish<r>(reduce_contiguous<r>(row, length), count);
      }
    }
    return;
  }
  // Combine whole rows: units are (outer index, block of inner columns).
  constexpr std::int64_t kBlock = 512;
  const std::int64_t blocks = (inner + kBlock - 1) / kBlock;
  const std::int64_t units = outer * blocks;
#pragma omp parallel for num_threads(loop_threads(units, length* kBlock, threads)) schedule(static)
  for (std::int64_t unit = 0; unit < units; ++unit) {
    const std::int64_t o = unit / blocks;
    const std::int64_t i0 = unit % blocks * kBlock;
    const std::int64_t width = std::min(kBlock, inner - i0);
    const float* slab = x + o * length * inner + i0;
    float* out = y + o * inner + i0;
    std::fill(out, out + width, reduce_init<r>());
    for (std::int64_t d = 0; d < length; ++d) {
      const float* row = slab + d * inner;
#pragma omp simd
      for (std::int64_t i = 0; i < width; ++i)
        out[i] = reduce_combine<r>(out[i], reduce_map<r>(row[i]));
    }
    if constexpr (r == Reduction::kLogSumExp) {
      float sums[kBlock] = {};
      for (std::int64_t d = 0; d < length; ++d) {
        const float* row = slab + d * inner;
        for (std::int64_t i = 0; i < width; ++i) sums[i] += std::exp(row[i] - out[i]);
      }
      for (std::int64_t i = 0; i < width; ++i) out[i] = log_sum_exp_finish(out[i], sums[i]);
    } else {
      for (std::int64_t i = 0; i < width; ++i) out[i] = reduce_finish<r>(out[i], count);
    }
  }
}

// Per input dimension, the step in the output of one step along it (0 for
// a reduced dimension).
std::vector<std::int64_t> output_strides(const ReduceLayout& layout) {
  std::vector<std::int64_t> out_stride(layout.sizes.size(), 0);
  std::int64_t run = 1;
  for (std::size_t d = layout.sizes.size(); d-- > 0;) {
    if (layout.reduced[d]) continue;
    out_stride[d] = run;
    run *= layout.sizes[d];
  }
  return out_stride;
}

// Any layout: walk the input once, accumulating into the output element
// each input element belongs to.
template <Reduction r>
void reduce_general(const float* x, float* y, const ReduceLayout& layout, std::int64_t outputs) {
  const std::size_t rank = layout.sizes.size();
  const std::vector<std::int64_t> out_stride = output_strides(layout);
  const std::int64_t total = shape_numel(layout.sizes);
  auto walk = [&](auto&& visit) {
    std::vector<std::int64_t> index(rank, 0);
    std::int64_t out = 0;
    for (std::int64_t i = 0; i < total; ++i) {
      visit(out, x[i]);
      for (std::size_t d = rank; d-- > 0;) {
        out += out_stride[d];
        if (++index[d] < layout.sizes[d]) break;
        out -= out_stride[d] * layout.sizes[d];
        index[d] = 0;
      }
    }
  };
  std::fill(y, y + outputs, reduce_init<r>());
  walk([&](std::int64_t out, float value) {
    y[out] = reduce_combine<r>(y[out], reduce_map<r>(value));
  });
  if constexpr (r == Reduction::kLogSumExp) {
    std::vector<float> sums(static_cast<std::size_t>(outputs), 0.0f);
    walk([&](std::int64_t out, float value) { sums[out] += std::exp(value - y[out]); });
    for (std::int64_t o = 0; o < outputs; ++o) y[o] = log_sum_exp_finish(y[o], sums[o]);
  } else {
    for (std::int64_t o = 0; o < outputs; ++o) y[o] = reduce_finish<r>(y[o], layout.reduced_count);
  }
}

// ReduceSum, ReduceProd, ReduceMax and ReduceMin of int64: sizes and
// counts computed from shapes, small and exact.
template <Reduction r>
void reduce_integers(const std::int64_t* x, std::int64_t* y, const ReduceLayout& layout,
                     std::int64_t outputs) {
  static_assert(r == Reduction::kSum || r == Reduction::kProd || r == Reduction::kMax ||
                r == Reduction::kMin);
  const std::size_t rank = layout.sizes.size();
  const std::vector<std::int64_t> out_stride = output_strides(layout);
  std::int64_t init = 0;
  if constexpr (r == Reduction::kProd) init = 1;
  if constexpr (r == Reduction::kMax) init = std::numeric_limits<std::int64_t>::min();
  if constexpr (r == Reduction::kMin) init = std::numeric_limits<std::int64_t>::max();
  std::fill(y, y + outputs, init);
  std::vector<std::int64_t> index(rank, 0);
  std::int64_t out = 0;
  const std::int64_t total = shape_numel(layout.sizes);
  for (std::int64_t i = 0; i < total; ++i) {
    if constexpr (r == Reduction::kSum) y[out] += x[i];
    if constexpr (r == Reduction::kProd) y[out] *= x[i];
    if constexpr (r == Reduction::kMax) y[out] = std::max(y[out], x[i]);
    if constexpr (r == Reduction::kMin) y[out] = std::min(y[out], x[i]);
    for (std::size_t d = rank; d-- > 0;) {
      out += out_stride[d];
      if (++index[d] < layout.sizes[d]) break;
      out -= out_stride[d] * layout.sizes[d];
      index[d] = 0;
    }
  }
}

template <Reduction r>
void run_reduction(const Node& node, std::span<const Tensor> inputs, std::span<Tensor> outputs,
                   int threads) {
  const Tensor& x = inputs[0];
  Tensor& y = outputs[0];
  const AxesChoice axes = reduce_axes(node, inputs, x.rank());
  if (axes.noop) {
    if (y.numel() != x.numel()) throw Error("output does not match the input", {.node = node.name});
    std::memcpy(y.raw(), x.raw(), x.byte_size());
    return;
  }
  const ReduceLayout layout = reduce_layout(x.shape(), axes.reduced);
  const std::int64_t expected = layout.reduced_count == 0 ? 0 : x.numel() / layout.reduced_count;
  if (layout.reduced_count != 0 && y.numel() != expected) {
    throw Error(fmt::format("output {} does not match reducing {}", y.type().to_string(),
                            x.type().to_string()),
                {.node = node.name});
  }
  if constexpr (r == Reduction::kSum || r == Reduction::kProd || r == Reduction::kMax ||
                r == Reduction::kMin) {
    if (x.dtype() == DType::kInt64) {
      reduce_integers<r>(x.data<std::int64_t>(), y.data<std::int64_t>(), layout, y.numel());
      return;
    }
  }
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
  if (layout.reduced_count == 0) {
    // Reducing an empty axis: every output is the reduction's identity.
    std::fill(yd, yd + y.numel(), reduce_finish<r>(reduce_init<r>(), 0));
    return;
  }
  const std::size_t runs = layout.sizes.size();
  const std::size_t reduced_runs =
      static_cast<std::size_t>(std::count(layout.reduced.begin(), layout.reduced.end(), true));
  if (reduced_runs <= 1) {
    std::int64_t outer = 1, length = 1, inner = 1;
    bool after = false;
    for (std::size_t d = 0; d < runs; ++d) {
      if (layout.reduced[d]) {
        length = layout.sizes[d];
        after = true;
      } else {
        (after ? inner : outer) *= layout.sizes[d];
      }
    }
    reduce_middle<r>(xd, yd, outer, length, inner, layout.reduced_count, threads);
    return;
  }
  reduce_general<r>(xd, yd, layout, y.numel());
}

template <bool max>
void run_arg_reduction(const Node& node, std::span<const Tensor> inputs, std::span<Tensor> outputs,
                       int threads) {
  const Tensor& x = inputs[0];
  Tensor& y = outputs[0];
  if (x.rank() == 0) throw Error("ArgMax/ArgMin of a scalar", {.node = node.name});
  const int axis = normalize_axis(node.attributes.get_int("axis", 0), x.rank(), node, "axis");
  const bool last = node.attributes.get_int("select_last_index", 0) != 0;
  std::int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  const std::int64_t length = x.shape()[axis];
  if (length == 0) throw Error("ArgMax/ArgMin over an empty axis", {.node = node.name});
  if (y.numel() != outer * inner) {
    throw Error(
        fmt::format("output {} does not match {}", y.type().to_string(), x.type().to_string()),
        {.node = node.name});
  }
  // Whether `value` replaces the current best: strictly better, or equal
  // when the last index wins ties.
  auto better = [last](float value, float best) {
    if constexpr (max) {
      return last ? value >= best : value > best;
    } else {
      return last ? value <= best : value < best;
    }
  };
  const float* xd = x.data<float>();
  std::int64_t* yd = y.data<std::int64_t>();
#pragma omp parallel for num_threads(loop_threads(outer, length* inner, threads)) schedule(static)
  for (std::int64_t o = 0; o < outer; ++o) {
    const float* slab = xd + o * length * inner;
    std::int64_t* out = yd + o * inner;
    for (std::int64_t i = 0; i < inner; ++i) {
      float best = slab[i];
      std::int64_t best_index = 0;
      for (std::int64_t d = 1; d < length; ++d) {
        const float value = slab[d * inner + i];
        if (better(value, best)) {
          best = value;
          best_index = d;
        }
      }
      out[i] = best_index;
    }
  }
}

void run_reduce_sum(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                    std::span<Tensor> outputs, int threads) {
  run_reduction<Reduction::kSum>(node, inputs, outputs, threads);
}
void run_reduce_mean(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                     std::span<Tensor> outputs, int threads) {
  run_reduction<Reduction::kMean>(node, inputs, outputs, threads);
}
void run_reduce_max(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                    std::span<Tensor> outputs, int threads) {
  run_reduction<Reduction::kMax>(node, inputs, outputs, threads);
}
void run_reduce_min(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                    std::span<Tensor> outputs, int threads) {
  run_reduction<Reduction::kMin>(node, inputs, outputs, threads);
}
void run_reduce_prod(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                     std::span<Tensor> outputs, int threads) {
  run_reduction<Reduction::kProd>(node, inputs, outputs, threads);
}
void run_reduce_sum_square(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                           std::span<Tensor> outputs, int threads) {
  run_reduction<Reduction::kSumSquare>(node, inputs, outputs, threads);
}
void run_reduce_l1(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                   std::span<Tensor> outputs, int threads) {
  run_reduction<Reduction::kL1>(node, inputs, outputs, threads);
}
void run_reduce_l2(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                   std::span<Tensor> outputs, int threads) {
  run_reduction<Reduction::kL2>(node, inputs, outputs, threads);
}
void run_reduce_log_sum(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                        std::span<Tensor> outputs, int threads) {
  run_reduction<Reduction::kLogSum>(node, inputs, outputs, threads);
}
void run_reduce_log_sum_exp(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                            std::span<Tensor> outputs, int threads) {
  run_reduction<Reduction::kLogSumExp>(node, inputs, outputs, threads);
}

bool check_reduce(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || node.inputs.size() > 2 || node.outputs.size() != 1) return false;
  const bool integer_op = node.op_type == "ReduceSum" || node.op_type == "ReduceProd" ||
                          node.op_type == "ReduceMax" || node.op_type == "ReduceMin";
  const bool integers = integer_op && graph.type(node.input(0)).dtype == DType::kInt64 &&
                        graph.type(node.outputs[0]).dtype == DType::kInt64;
  if (!integers && (!is_float32(graph, node.input(0)) || !float32_io(graph, node, 1))) return false;
  const ValueId axes = node.input(1);
  if (axes != kNoValue) {
    const TensorType& type = graph.type(axes);
    if (type.dtype != DType::kInt64 && type.dtype != DType::kInt32) return false;
    if (type.rank() > 1) return false;
  }
  return true;
}

void run_arg_max(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                 std::span<Tensor> outputs, int threads) {
  run_arg_reduction<true>(node, inputs, outputs, threads);
}

void run_arg_min(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                 std::span<Tensor> outputs, int threads) {
  run_arg_reduction<false>(node, inputs, outputs, threads);
}

bool check_arg_reduce(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || node.outputs.size() != 1) return false;
  if (!is_float32(graph, node.input(0))) return false;
  if (graph.type(node.outputs[0]).dtype != DType::kInt64) return false;
  const int rank = graph.type(node.input(0)).rank();
  const std::int64_t axis = node.attributes.get_int("axis", 0);
  return rank >= 1 && axis >= -rank && axis < rank;
}

// Hardmax: 1 at the first largest element of each line along `axis`, 0
// elsewhere. Before opset 13 the line is every axis from `axis` on (the
// input seen as a matrix), as Softmax's was.
void run_hardmax(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                 std::span<Tensor> outputs, int threads) {
  const Tensor& x = inputs[0];
  const int rank = x.rank();
  if (rank == 0) throw Error("Hardmax of a scalar", {.node = node.name});
  if (outputs[0].shape() != x.shape()) {
    throw Error("the output's shape differs from the input's", {.node = node.name});
  }
  const bool coerced = graph.opset < 13;
  const int axis =
      normalize_axis(node.attributes.get_int("axis", coerced ? 1 : -1), rank, node, "axis");
  const Shape& shape = x.shape();
  std::int64_t outer = 1, n = 1, inner = 1;
  for (int d = 0; d < rank; ++d) {
    const std::int64_t dim = shape[static_cast<std::size_t>(d)];
    if (d < axis) {
      outer *= dim;
    } else if (d == axis || coerced) {
      n *= dim;
    } else {
      inner *= dim;
    }
  }
  const float* in = x.data<float>();
  float* out = outputs[0].data<float>();
  std::fill_n(out, outputs[0].numel(), 0.0f);
  if (n == 0) return;
  const std::int64_t lines = outer * inner;
  const int team = loop_threads(lines, n, threads);
#pragma omp parallel for num_threads(team) if (team > 1) schedule(static)
  for (std::int64_t line = 0; line < lines; ++line) {
    const std::int64_t base = (line / inner) * n * inner + line % inner;
    std::int64_t best = 0;
    for (std::int64_t j = 1; j < n; ++j) {
      if (in[base + j * inner] > in[base + best * inner]) best = j;
    }
    out[base + best * inner] = 1.0f;
  }
}

bool check_hardmax(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || node.outputs.size() != 1) return false;
  if (!float32_io(graph, node, 1) || !is_float32(graph, node.input(0))) return false;
  const int rank = graph.type(node.input(0)).rank();
  const std::int64_t axis = node.attributes.get_int("axis", graph.opset < 13 ? 1 : -1);
  return rank >= 1 && axis >= -rank && axis < rank;
}

// TopK: the k largest (or smallest) elements along an axis, in order, and
// their indices. Equal values come lowest index first, as in ONNX's
// reference; NaN counts as larger than every number.
void run_top_k(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
               std::span<Tensor> outputs, int threads) {
  const Tensor& x = inputs[0];
  const int rank = x.rank();
  if (rank == 0) throw Error("TopK of a scalar", {.node = node.name});
  const int axis = normalize_axis(node.attributes.get_int("axis", -1), rank, node, "axis");
  std::int64_t k = 0;
  if (graph.opset < 10) {
    k = node.attributes.get_int("k");
  } else {
    if (inputs.size() < 2 || inputs[1].numel() != 1) {
      throw Error("K must be a tensor of one element", {.node = node.name, .field = "input 1"});
    }
    k = inputs[1].int_at(0);
  }
  const Shape& shape = x.shape();
  const auto a = static_cast<std::size_t>(axis);
  if (k < 0 || k > shape[a]) {
    throw Error(fmt::format("K = {} is outside [0, {}]", k, shape[a]), {.node = node.name});
  }
  Shape expected = shape;
  expected[a] = k;
  for (const Tensor& out : outputs) {
    if (out.shape() != expected) {
      throw Error(fmt::format("output {} does not match taking {} along axis {}",
                              out.type().to_string(), k, axis),
                  {.node = node.name});
    }
  }
  const bool largest = node.attributes.get_int("largest", 1) != 0;
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < a; ++d) outer *= shape[d];
  for (std::size_t d = a + 1; d < shape.size(); ++d) inner *= shape[d];
  const std::int64_t n = shape[a];
  const float* in = x.data<float>();
  float* values = outputs[0].data<float>();
  auto* indices = outputs[1].data<std::int64_t>();
  // a before b: a is NaN and b is not, or a > b.
  auto greater = [](float lhs, float rhs) {
    if (std::isnan(lhs)) return !std::isnan(rhs);
    return !std::isnan(rhs) && lhs > rhs;
  };
  const std::int64_t lines = outer * inner;
  const int team = loop_threads(lines, n, threads);
#pragma omp parallel num_threads(team) if (team > 1)
  {
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
#pragma omp for schedule(static)
    for (std::int64_t line = 0; line < lines; ++line) {
      const std::int64_t o = line / inner, i = line % inner;
      const float* base = in + o * n * inner + i;
      std::iota(order.begin(), order.end(), std::int64_t{0});
      auto before = [&](std::int64_t p, std::int64_t q) {
        const float vp = base[p * inner], vq = base[q * inner];
        const bool p_first = largest ? greater(vp, vq) : greater(vq, vp);
        const bool q_first = largest ? greater(vq, vp) : greater(vp, vq);
        return p_first || (!q_first && p < q);
      };
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      for (std::int64_t j = 0; j < k; ++j) {
        const std::int64_t at = (o * k + j) * inner + i;
        const std::int64_t index = order[static_cast<std::size_t>(j)];
        values[at] = base[index * inner];
        indices[at] = index;
      }
    }
  }
}

bool check_top_k(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || node.inputs.size() > 2 || node.outputs.size() != 2) return false;
  if (!is_float32(graph, node.input(0)) || !is_float32(graph, node.outputs[0])) return false;
  if (graph.type(node.outputs[1]).dtype != DType::kInt64) return false;
  if (graph.opset >= 10) {
    const ValueId k = node.input(1);
    if (k == kNoValue || graph.type(k).dtype != DType::kInt64) return false;
  }
  return graph.type(node.input(0)).rank() >= 1;
}

constexpr OpEntry kReduceOps[] = {
    {"ReduceSum", run_reduce_sum, check_reduce},
    {"ReduceMean", run_reduce_mean, check_reduce},
    {"ReduceMax", run_reduce_max, check_reduce},
    {"ReduceMin", run_reduce_min, check_reduce},
    {"ReduceProd", run_reduce_prod, check_reduce},
    {"ReduceSumSquare", run_reduce_sum_square, check_reduce},
    {"ReduceL1", run_reduce_l1, check_reduce},
    {"ReduceL2", run_reduce_l2, check_reduce},
    {"ReduceLogSum", run_reduce_log_sum, check_reduce},
    {"ReduceLogSumExp", run_reduce_log_sum_exp, check_reduce},
    {"ArgMax", run_arg_max, check_arg_reduce},
    {"ArgMin", run_arg_min, check_arg_reduce},
    {"Hardmax", run_hardmax, check_hardmax},
    {"TopK", run_top_k, check_top_k},
};

}  // namespace

std::span<const OpEntry> reduce_ops() { return kReduceOps; }

}  // namespace collage::native
