// The Reduce* family, ArgMax, ArgMin and TopK against a direct loop that visits
// every input element and accumulates in double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backends/native/compute_op_harness.h"

namespace collage::native_test {
namespace {

using Ints = std::vector<std::int64_t>;

const char* const kReductions[] = {"ReduceSum",    "ReduceMean",      "ReduceMax", "ReduceMin",
                                   "ReduceProd",   "ReduceSumSquare", "ReduceL1",  "ReduceL2",
                                   "ReduceLogSum", "ReduceLogSumExp"};

// The reduced shape (keepdims) and which axes are reduced.
std::vector<bool> reduced_axes(const Ints& axes, std::size_t rank) {
  std::vector<bool> reduced(rank, axes.empty());
  for (std::int64_t axis : axes) {
    reduced[static_cast<std::size_t>(axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis)] =
        true;
  }
  return reduced;
}

Shape output_shape(const Shape& shape, const std::vector<bool>& reduced, bool keepdims) {
  Shape out;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (!reduced[d]) {
      out.push_back(shape[d]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

std::vector<float> naive_reduce(const std::string& op, const Tensor& x,
                                const std::vector<bool>& reduced) {
  const Shape& shape = x.shape();
  const std::size_t rank = shape.size();
  std::int64_t outputs = 1, count = 1;
  for (std::size_t d = 0; d < rank; ++d) (reduced[d] ? count : outputs) *= shape[d];
  // Output index of each input element, by decomposing its index.
  std::vector<std::int64_t> target(static_cast<std::size_t>(x.numel()));
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    std::int64_t rest = i, out = 0, scale = 1;
    for (std::size_t d = rank; d-- > 0;) {
      const std::int64_t index = rest % shape[d];
      rest /= shape[d];
      if (reduced[d]) continue;
      out += index * scale;
      scale *= shape[d];
    }
    target[static_cast<std::size_t>(i)] = out;
  }
  std::vector<double> acc(static_cast<std::size_t>(outputs), op == "ReduceProd"  ? 1.0
                                                             : op == "ReduceMax" ? -INFINITY
                                                             : op == "ReduceMin" ? INFINITY
                                                                                 : 0.0);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.data<float>()[i];
    double& a = acc[target[i]];
    if (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceLogSum") a += v;
    if (op == "ReduceMax") a = std::max(a, v);
    if (op == "ReduceMin") a = std::min(a, v);
    if (op == "ReduceProd") a *= v;
    if (op == "ReduceSumSquare" || op == "ReduceL2") a += v * v;
    if (op == "ReduceL1") a += std::fabs(v);
    if (op == "ReduceLogSumExp") a += std::exp(v);
  }
  std::vector<float> result;
  for (double a : acc) {
    if (op == "ReduceMean") a /= static_cast<double>(count);
    if (op == "ReduceL2") a = std::sqrt(a);
    if (op == "ReduceLogSumExp" || op == "ReduceLogSum") a = std::log(a);
    result.push_back(static_cast<float>(a));
  }
  return result;
}

void expect_reduce(const std::string& op, const Shape& shape, const Ints& axes, bool keepdims,
                   bool axes_as_input, std::int64_t opset, int threads = 1) {
  SCOPED_TRACE(::testing::Message()
               << op << " " << shape_to_string(shape) << " axes=" << shape_to_string(axes)
               << " keepdims=" << keepdims << " axes_input=" << axes_as_input);
  // Products stay near 1 and logs of sums stay defined.
  const bool positive = op == "ReduceProd" || op == "ReduceLogSum";
  const float lo = positive ? 0.7f : -2.0f;
  const float hi = positive ? 1.3f : 2.0f;
  const Tensor x = random_tensor(shape, 121, lo, hi);
  const std::vector<bool> reduced = reduced_axes(axes, shape.size());
  Attributes attributes;
  attributes.set("keepdims", std::int64_t{keepdims});
  ComputeCase c{op, {x}, {f32_type(output_shape(shape, reduced, keepdims))}, attributes, opset};
  if (axes_as_input) {
    c.inputs.push_back(i64_tensor({static_cast<std::int64_t>(axes.size())}, axes));
  } else if (!axes.empty()) {
    c.attributes.set("axes", axes);
  }
  c.threads = threads;
  expect_close(c.run_one(), naive_reduce(op, x, reduced), 1e-5f);
}

TEST(ReduceTest, EveryReductionOverEveryAxisPatternMatchesDirectLoops) {
  const Ints patterns[] = {{}, {0}, {1}, {3}, {0, 2}, {1, 3}, {1, 2}, {-1, -2}, {0, 1, 2, 3}};
  for (const char* op : kReductions) {
    for (const Ints& axes : patterns) {
      for (bool keepdims : {true, false}) {
        const bool input = std::string(op) == "ReduceSum";
        expect_reduce(op, {3, 4, 5, 6}, axes, keepdims, input, 13);
      }
    }
  }
}

TEST(ReduceTest, ReduceSumTakesAxesAsAnAttributeBeforeOpsetThirteen) {
  expect_reduce("ReduceSum", {4, 5, 6}, {0, 2}, true, false, 11);
  expect_reduce("ReduceSum", {4, 5, 6}, {}, false, false, 11);
}

TEST(ReduceTest, UnitDimensionsAndLargeRowsRunInParallel) {
  expect_reduce("ReduceMean", {8, 1, 3000}, {2}, true, false, 13, 2);
  expect_reduce("ReduceMax", {2, 3000, 1, 20}, {1}, false, false, 13, 2);
  expect_reduce("ReduceLogSumExp", {2, 3, 1, 600}, {0, 2}, true, false, 13, 2);
}

TEST(ReduceTest, OnnxReduceMeanExampleIsExact) {
  Attributes attributes;
  attributes.set("axes", Ints{1});
  attributes.set("keepdims", std::int64_t{1});
  ComputeCase c{"ReduceMean",
                {f32_tensor({3, 2, 2}, {5, 1, 20, 2, 30, 1, 40, 2, 55, 1, 60, 2})},
                {f32_type({3, 1, 2})},
                attributes};
  expect_close(c.run_one(), {12.5f, 1.5f, 35.0f, 1.5f, 57.5f, 1.5f}, 0.0f);
}

TEST(ReduceTest, EmptyAxesWithNoopFlagCopiesTheInput) {
  Attributes attributes;
  attributes.set("noop_with_empty_axes", std::int64_t{1});
  const Tensor x = random_tensor({3, 2, 2}, 131);
  ComputeCase c{"ReduceSum", {x, i64_tensor({0}, {})}, {f32_type({3, 2, 2})}, attributes};
  expect_close(c.run_one(), values_of(x), 0.0f);
}

TEST(ReduceTest, LogSumExpOfLargeValuesDoesNotOverflow) {
  Attributes attributes;
  attributes.set("keepdims", std::int64_t{0});
  attributes.set("axes", Ints{1});
  ComputeCase c{"ReduceLogSumExp",
                {f32_tensor({2, 2}, {1000, 1000, -1000, -1000})},
                {f32_type({2})},
                attributes};
  expect_close(c.run_one(), {1000.6931472f, -999.3068528f}, 1e-6f);
}

TEST(ReduceTest, RepeatedAxesAreAnError) {
  Attributes attributes;
  attributes.set("axes", Ints{1, -2});
  ComputeCase c{"ReduceMax", {random_tensor({2, 3}, 1)}, {f32_type({2, 1})}, attributes};
  EXPECT_THROW(c.run(), Error);
}

std::vector<std::int64_t> naive_arg(const Tensor& x, int axis, bool max, bool last) {
  std::int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  const std::int64_t length = x.shape()[axis];
  std::vector<std::int64_t> result;
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      std::int64_t best = 0;
      for (std::int64_t d = 1; d < length; ++d) {
        const float v = x.data<float>()[(o * length + d) * inner + i];
        const float b = x.data<float>()[(o * length + best) * inner + i];
        const bool better = max ? (v > b || (last && v == b)) : (v < b || (last && v == b));
        if (better) best = d;
      }
      result.push_back(best);
    }
  }
  return result;
}

TEST(ArgReduceTest, TiesResolveToFirstOrLastIndexOnEveryAxis) {
  // Few distinct values, so ties are everywhere.
  Tensor x = random_tensor({3, 4, 5}, 141, 0.0f, 3.0f);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::floor(x.data<float>()[i]);
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int axis : {0, 1, 2}) {
      for (bool last : {false, true}) {
        for (bool keepdims : {false, true}) {
          SCOPED_TRACE(::testing::Message() << op << " axis=" << axis << " last=" << last);
          Shape out = x.shape();
          if (keepdims) {
            out[axis] = 1;
          } else {
            out.erase(out.begin() + axis);
          }
          Attributes attributes;
          attributes.set("axis", std::int64_t{axis == 2 ? -1 : axis});
          attributes.set("keepdims", std::int64_t{keepdims});
          attributes.set("select_last_index", std::int64_t{last});
          ComputeCase c{op, {x}, {TensorType{DType::kInt64, out}}, attributes};
          const Tensor result = c.run_one();
          const std::vector<std::int64_t> expected =
              naive_arg(x, axis, std::string(op) == "ArgMax", last);
          EXPECT_EQ(std::vector<std::int64_t>(result.data<std::int64_t>(),
                                              result.data<std::int64_t>() + result.numel()),
                    expected);
        }
      }
    }
  }
}

// TopK against a stable sort of each line: value order (largest or
// smallest first), equal values lowest index first.
TEST(TopKTest, TakesTheFirstKOfAStableSortOfEachLineOnEveryAxis) {
  Tensor x = random_tensor({3, 6, 4}, 142, 0.0f, 4.0f);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::floor(x.data<float>()[i]);
  const Shape& shape = x.shape();
  for (int axis : {0, 1, 2}) {
    for (bool largest : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "axis=" << axis << " largest=" << largest);
      const std::int64_t k = shape[axis] - 1;
      Shape out = shape;
      out[axis] = k;
      Attributes attributes;
      attributes.set("axis", std::int64_t{axis == 2 ? -1 : axis});
      attributes.set("largest", std::int64_t{largest});
      ComputeCase c{"TopK",
                    {x, Tensor::from_vector<std::int64_t>({k}, {1})},
                    {TensorType{DType::kFloat32, out}, TensorType{DType::kInt64, out}},
                    attributes};
      c.threads = 2;
      const std::vector<Tensor> result = c.run();
      std::int64_t outer = 1, inner = 1;
      for (int d = 0; d < axis; ++d) outer *= shape[d];
      for (int d = axis + 1; d < 3; ++d) inner *= shape[d];
      const std::int64_t n = shape[axis];
      for (std::int64_t o = 0; o < outer; ++o) {
        for (std::int64_t i = 0; i < inner; ++i) {
          std::vector<std::pair<float, std::int64_t>> line;
          for (std::int64_t j = 0; j < n; ++j) {
            line.emplace_back(x.data<float>()[(o * n + j) * inner + i], j);
          }
          std::stable_sort(line.begin(), line.end(), [&](const auto& p, const auto& q) {
            return largest ? p.first > q.first : p.first < q.first;
          });
          for (std::int64_t j = 0; j < k; ++j) {
            const std::int64_t at = (o * k + j) * inner + i;
            EXPECT_EQ(result[0].data<float>()[at], line[static_cast<std::size_t>(j)].first);
            EXPECT_EQ(result[1].data<std::int64_t>()[at], line[static_cast<std::size_t>(j)].second);
          }
        }
      }
    }
  }
}

TEST(TopKTest, ReadsKFromItsAttributeBeforeOpset10) {
  Attributes attributes;
  attributes.set("k", std::int64_t{2});
  ComputeCase c{"TopK",
                {f32_tensor({1, 4}, {3, 9, 1, 9})},
                {TensorType{DType::kFloat32, {1, 2}}, TensorType{DType::kInt64, {1, 2}}},
                attributes};
  c.opset = 9;
  const std::vector<Tensor> result = c.run();
  EXPECT_EQ(result[0].data<float>()[0], 9.0f);
  EXPECT_EQ(result[0].data<float>()[1], 9.0f);
  EXPECT_EQ(result[1].data<std::int64_t>()[0], 1);
  EXPECT_EQ(result[1].data<std::int64_t>()[1], 3);
}

TEST(ArgReduceTest, OnnxArgMaxExampleIsExact) {
  Attributes attributes;
  attributes.set("axis", std::int64_t{1});
  attributes.set("keepdims", std::int64_t{1});
  ComputeCase c{"ArgMax",
                {f32_tensor({2, 2}, {2, 1, 3, 10})},
                {TensorType{DType::kInt64, {2, 1}}},
                attributes};
  const Tensor result = c.run_one();
  EXPECT_EQ(result.data<std::int64_t>()[0], 0);
  EXPECT_EQ(result.data<std::int64_t>()[1], 1);
}

}  // namespace
}  // namespace collage::native_test
