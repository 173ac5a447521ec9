// Random partitions mixing spatial ops (channels-last inside), reshapes and
// fully connected layers (NCHW order), softmax over either, broadcasts and
// elementwise ops. Each one either compiles and matches the reference, or is
// refused with a reason (a value needed in both layouts); it never crashes or
// computes a wrong answer.
#include <gtest/gtest.h>

#include <random>

#include "backends/xnnpack/reference_check.h"

namespace collage::testing {
namespace {

class RandomGraph {
 public:
  explicit RandomGraph(std::uint32_t seed) : engine_(seed) {
    values_.push_back(g_.input({2, 3, 6, 5}));
  }

  Graph make(int steps) {
    for (int step = 0; step < steps; ++step) add_node();
    // The last value and, sometimes, another are the partition's outputs.
    g_.output(values_.back());
    if (values_.size() > 2 && pick(0, 1) == 1) {
      ValueId other =
          values_[static_cast<std::size_t>(pick(1, static_cast<std::int64_t>(values_.size()) - 2))];
      if (g_.graph().value(other).producer != kNoNode) g_.output(other);
    }
    return g_.finish(values_.back());
  }

 private:
  std::int64_t pick(std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(engine_);
  }
  Shape shape(ValueId v) { return g_.graph().type(v).shape; }
  ValueId any_value() {
    return values_[static_cast<std::size_t>(
        pick(0, static_cast<std::int64_t>(values_.size()) - 1))];
  }
  ValueId value_of_rank(std::size_t rank) {
    std::vector<ValueId> matching;
    for (ValueId v : values_) {
      if (shape(v).size() == rank) matching.push_back(v);
    }
    if (matching.empty()) return kNoValue;
    return matching[static_cast<std::size_t>(
        pick(0, static_cast<std::int64_t>(matching.size()) - 1))];
  }

  void add_node() {
    switch (pick(0, 9)) {
      case 0:
      case 1: {  // Conv, same size
        ValueId x = value_of_rank(4);
        if (x == kNoValue) return;
        const Shape s = shape(x);
        const std::int64_t out = pick(1, 4);
        const std::int64_t k = pick(0, 1) * 2 + 1;
        ValueId w = g_.weights({out, s[1], k, k}, -0.5f, 0.5f);
        values_.push_back(g_.node("Conv", {x, w, g_.weights({out})}, {s[0], out, s[2], s[3]},
                                  attrs({{"pads", Ints{k / 2, k / 2, k / 2, k / 2}}})));
        return;
      }
      case 2: {  // unary
        ValueId x = any_value();
        const char* ops[] = {"Relu", "Sigmoid", "HardSwish", "Neg", "Swish"};
        values_.push_back(g_.node(ops[pick(0, 4)], {x}, shape(x)));
        return;
      }
      case 3: {  // broadcast binary
        ValueId a = any_value();
        const Shape s = shape(a);
        ValueId b = kNoValue;
        switch (pick(0, 3)) {
          case 0:
            b = a;
            break;
          case 1:
            b = g_.weights(Shape(s.begin() + 1, s.end()));
            break;
          case 2:
            b = g_.input({s.back()});
            break;
          default:
            b = s.size() == 4 ? g_.weights({s[1], 1, 1}) : g_.weights({1});
            break;
        }
        values_.push_back(g_.node(pick(0, 1) ? "Add" : "Mul", {a, b}, s));
        return;
      }
      case 4: {  // pooling
        ValueId x = value_of_rank(4);
        if (x == kNoValue) return;
        const Shape s = shape(x);
        if (s[2] < 2 || s[3] < 2) return;
        values_.push_back(g_.node("MaxPool", {x}, {s[0], s[1], s[2] / 2, s[3] / 2},
                                  attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}})));
        return;
      }
      case 5: {  // global pooling
        ValueId x = value_of_rank(4);
        if (x == kNoValue) return;
        const Shape s = shape(x);
        values_.push_back(g_.node("GlobalAveragePool", {x}, {s[0], s[1], 1, 1}));
        return;
      }
      case 6: {  // flatten, then maybe a fully connected layer
        ValueId x = value_of_rank(4);
        if (x == kNoValue) return;
        const Shape s = shape(x);
        const std::int64_t features = s[1] * s[2] * s[3];
        ValueId flat = g_.node("Flatten", {x}, {s[0], features});
        values_.push_back(flat);
        if (pick(0, 1) == 0) return;
        values_.push_back(
            g_.node("Gemm", {flat, g_.weights({features, 4}), g_.weights({4})}, {s[0], 4}));
        return;
      }
      case 7: {  // softmax: over channels (channels-last) or the last axis (NCHW order)
        ValueId x = any_value();
        const std::int64_t axis = shape(x).size() == 4 && pick(0, 1) == 0 ? 1 : -1;
        values_.push_back(g_.node("Softmax", {x}, shape(x), attrs({{"axis", axis}})));
        return;
      }
      case 8: {  // batch normalization
        ValueId x = value_of_rank(4);
        if (x == kNoValue) return;
        const Shape c = {shape(x)[1]};
        values_.push_back(g_.node(
            "BatchNormalization",
            {x, g_.weights(c), g_.weights(c), g_.weights(c), g_.weights(c, 0.5f, 1.5f)}, shape(x)));
        return;
      }
      default: {  // pad
        ValueId x = value_of_rank(4);
        if (x == kNoValue) return;
        Shape s = shape(x);
        s[2] += 1;
        s[3] += 2;
        values_.push_back(g_.node("Pad", {x, g_.ints({0, 0, 1, 0, 0, 0, 0, 2})}, s));
        return;
      }
    }
  }

  std::mt19937 engine_;
  GraphMaker g_;
  std::vector<ValueId> values_;
};

TEST(XnnpackRandomGraphTest, CompiledPartitionsMatchReferenceAndTheRestFailCleanly) {
  int compiled = 0;
  int refused = 0;
  for (std::uint32_t seed = 0; seed < 60; ++seed) {
    Graph graph = RandomGraph(seed).make(7);
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    for (const Node& node : graph.nodes()) {
      ASSERT_TRUE(xnnpack_backend().supports(graph, node)) << node.op_type << " " << node.name;
    }
    auto kernel = xnnpack_backend().compile(graph, CompileOptions{1});
    if (!kernel.ok()) {
      ++refused;
      EXPECT_NE(kernel.error().find("channels-last"), std::string::npos) << kernel.error();
      continue;
    }
    ++compiled;
    expect_matches_reference(graph, seed % 2 == 0 ? 1 : 2);
  }
  EXPECT_GT(compiled, 20);
  RecordProperty("refused", refused);
}

}  // namespace
}  // namespace collage::testing
