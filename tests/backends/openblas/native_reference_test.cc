// The openblas backend against the project's reference executor (the native
// kernels, run node by node) over grids of shapes and attributes.
#include <gtest/gtest.h>

#include "backends/openblas/openblas_test_util.h"
#include "collage/backends/native/native_backend.h"

namespace collage::openblas_test {
namespace {

void expect_matches_native(const Graph& graph, int threads, const std::string& label) {
  std::vector<Tensor> inputs = inputs_for(graph, 3);
  Tensor actual = compile_and_run(graph, inputs, threads);
  std::unique_ptr<Kernel> reference = compile_reference(graph, 1);
  Tensor expected = run(*reference, graph, inputs);
  EXPECT_TRUE(all_close(actual, expected)) << label << " on " << threads << " threads";
}

std::int64_t conv_out(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d,
                      std::int64_t pads) {
  return (in + pads - ((k - 1) * d + 1)) / s + 1;
}

// x [1, c, h, w] -> Conv(k x k, stride, dilation, pad, group, bias) -> y.
Graph conv(std::int64_t c, std::int64_t m, std::int64_t h, std::int64_t k, std::int64_t stride,
           std::int64_t dilation, std::int64_t pad, std::int64_t group) {
  Graph graph;
  const std::int64_t o = conv_out(h, k, stride, dilation, 2 * pad);
  ValueId x = graph.add_input("x", f32({1, c, h, h + 1}));
  ValueId w = graph.add_constant("w", random_constant(f32({m, c / group, k, k}), "w"));
  ValueId b = graph.add_constant("b", random_constant(f32({m}), "b"));
  ValueId y = graph.add_value("y", f32({1, m, o, conv_out(h + 1, k, stride, dilation, 2 * pad)}));
  Attributes attrs;
  attrs.set("strides", std::vector<std::int64_t>{stride, stride});
  attrs.set("dilations", std::vector<std::int64_t>{dilation, dilation});
  attrs.set("pads", std::vector<std::int64_t>{pad, pad, pad, pad});
  attrs.set("group", group);
  graph.add_node("Conv", {x, w, b}, {y}, attrs);
  graph.add_output(y);
  return graph;
}

TEST(OpenBlasVersusNativeTest, ConvolutionsAgreeAcrossStridesPadsDilationsAndGroups) {
  for (std::int64_t group : {1, 2, 8}) {
    for (std::int64_t k : {1, 3}) {
      for (std::int64_t stride : {1, 2}) {
        for (std::int64_t dilation : {1, 2}) {
          for (std::int64_t pad : {0, 1}) {
            Graph graph = conv(8, 8, 9, k, stride, dilation, pad, group);
            expect_matches_native(graph, group == 8 ? 2 : 1,
                                  "conv k" + std::to_string(k) + " s" + std::to_string(stride) +
                                      " d" + std::to_string(dilation) + " p" + std::to_string(pad) +
                                      " g" + std::to_string(group));
          }
        }
      }
    }
  }
}

TEST(OpenBlasVersusNativeTest, ConvolutionsWithAutoPadAgree) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    Graph graph;
    const bool same = std::string(mode) != "VALID";
    ValueId x = graph.add_input("x", f32({1, 3, 8, 7}));
    ValueId w = graph.add_constant("w", random_constant(f32({4, 3, 4, 3}), "w"));
    Shape out = same ? Shape{1, 4, 4, 4} : Shape{1, 4, 3, 3};
    ValueId y = graph.add_value("y", f32(out));
    Attributes attrs;
    attrs.set("strides", std::vector<std::int64_t>{2, 2});
    attrs.set("auto_pad", std::string(mode));
    graph.add_node("Conv", {x, w}, {y}, attrs);
    graph.add_output(y);
    expect_matches_native(graph, 1, mode);
  }
}

TEST(OpenBlasVersusNativeTest, GemmsAgreeForEveryTransposeAndShapeOfC) {
  const std::int64_t m = 6, n = 10, k = 7;
  for (bool trans_a : {false, true}) {
    for (bool trans_b : {false, true}) {
      for (const Shape& c_shape : {Shape{n}, Shape{m, 1}, Shape{m, n}, Shape{}}) {
        Graph graph;
        ValueId a = graph.add_input("a", f32(trans_a ? Shape{k, m} : Shape{m, k}));
        ValueId b =
            graph.add_constant("b", random_constant(f32(trans_b ? Shape{n, k} : Shape{k, n}), "b"));
        ValueId c = graph.add_input("c", f32(c_shape));
        ValueId y = graph.add_value("y", f32({m, n}));
        Attributes attrs;
        attrs.set("transA", std::int64_t{trans_a});
        attrs.set("transB", std::int64_t{trans_b});
        attrs.set("alpha", 0.75f);
        attrs.set("beta", -1.5f);
        graph.add_node("Gemm", {a, b, c}, {y}, attrs);
        graph.add_output(y);
        expect_matches_native(graph, 1,
                              "gemm transA=" + std::to_string(trans_a) + " transB=" +
                                  std::to_string(trans_b) + " C" + shape_to_string(c_shape));
      }
    }
  }
}

TEST(OpenBlasVersusNativeTest, MatMulsAgreeForBatchedBroadcastAndVectorOperands) {
  struct Case {
    Shape a, b, y;
  };
  const Case cases[] = {
      {{16, 8}, {8, 12}, {16, 12}},
      {{2, 3, 16, 8}, {8, 12}, {2, 3, 16, 12}},
      {{4, 32, 16}, {4, 16, 32}, {4, 32, 32}},
      {{2, 1, 5, 8}, {3, 8, 4}, {2, 3, 5, 4}},
      {{8}, {3, 8, 4}, {3, 4}},
      {{3, 5, 8}, {8}, {3, 5}},
      {{8}, {8}, {}},
  };
  for (const Case& c : cases) {
    Graph graph;
    ValueId a = graph.add_input("a", f32(c.a));
    ValueId b = graph.add_input("b", f32(c.b));
    ValueId y = graph.add_value("y", f32(c.y));
    graph.add_node("MatMul", {a, b}, {y});
    graph.add_output(y);
    for (int threads : {1, 2}) {
      expect_matches_native(graph, threads, shape_to_string(c.a) + " x " + shape_to_string(c.b));
    }
  }
}

TEST(OpenBlasVersusNativeTest, FusedEpiloguesAgreeWithTheNodesRunOneByOne) {
  for (const char* activation : {"Relu", "Sigmoid", "Tanh", "HardSwish", "LeakyRelu"}) {
    Graph graph;
    ValueId a = graph.add_input("a", f32({2, 16, 24}));
    ValueId b = graph.add_constant("b", random_constant(f32({24, 32}), "b"));
    ValueId bias = graph.add_constant("bias", random_constant(f32({32}), "bias"));
    ValueId residual = graph.add_input("residual", f32({2, 16, 32}));
    ValueId y = graph.add_value("y", f32({2, 16, 32}));
    ValueId biased = graph.add_value("biased", f32({2, 16, 32}));
    ValueId summed = graph.add_value("summed", f32({2, 16, 32}));
    ValueId out = graph.add_value("out", f32({2, 16, 32}));
    graph.add_node("MatMul", {a, b}, {y});
    graph.add_node("Add", {y, bias}, {biased});
    graph.add_node("Add", {residual, biased}, {summed});
    graph.add_node(activation, {summed}, {out});
    graph.add_output(out);
    expect_matches_native(graph, 2, std::string("matmul+add+add+") + activation);
  }
}

struct ActivationCase {
  std::string op;
  Attributes attributes;
};

std::vector<ActivationCase> gelu_swish_cases() {
  Attributes tanh_form;
  tanh_form.set("approximate", std::string("tanh"));
  Attributes alpha;
  alpha.set("alpha", 1.702f);
  return {{"Gelu", {}}, {"Gelu", tanh_form}, {"Swish", {}}, {"Swish", alpha}, {"HardSwish", {}}};
}

std::string label(const std::string& head, const ActivationCase& c) {
  std::string text = head + "+" + c.op;
  if (c.attributes.has("approximate")) text += "(tanh)";
  if (c.attributes.has("alpha")) text += "(alpha)";
  return text;
}

TEST(OpenBlasVersusNativeTest, GeluAndSwishEpiloguesAfterAMatMulAgree) {
  for (const ActivationCase& c : gelu_swish_cases()) {
    Graph graph;
    graph.opset = 17;
    ValueId a = graph.add_input("a", f32({2, 16, 24}));
    ValueId b = graph.add_constant("b", random_constant(f32({24, 32}), "b"));
    ValueId bias = graph.add_constant("bias", random_constant(f32({32}), "bias"));
    ValueId y = graph.add_value("y", f32({2, 16, 32}));
    ValueId biased = graph.add_value("biased", f32({2, 16, 32}));
    ValueId out = graph.add_value("out", f32({2, 16, 32}));
    graph.add_node("MatMul", {a, b}, {y});
    graph.add_node("Add", {y, bias}, {biased});
    graph.add_node(c.op, {biased}, {out}, c.attributes);
    graph.add_output(out);
    expect_matches_native(graph, 2, label("matmul+add", c));
  }
}

TEST(OpenBlasVersusNativeTest, GeluAndSwishEpiloguesAfterAConvAgree) {
  for (const ActivationCase& c : gelu_swish_cases()) {
    Graph graph;
    graph.opset = 17;
    ValueId x = graph.add_input("x", f32({1, 8, 9, 9}));
    ValueId w = graph.add_constant("w", random_constant(f32({8, 8, 3, 3}), "w"));
    ValueId b = graph.add_constant("b", random_constant(f32({8}), "b"));
    ValueId y = graph.add_value("y", f32({1, 8, 7, 7}));
    ValueId out = graph.add_value("out", f32({1, 8, 7, 7}));
    graph.add_node("Conv", {x, w, b}, {y});
    graph.add_node(c.op, {y}, {out}, c.attributes);
    graph.add_output(out);
    expect_matches_native(graph, 1, label("conv", c));
  }
}

TEST(OpenBlasVersusNativeTest, DepthwiseConvWithClipAgrees) {
  Graph graph;
  ValueId x = graph.add_input("x", f32({1, 16, 14, 14}));
  ValueId w = graph.add_constant("w", random_constant(f32({16, 1, 3, 3}), "w"));
  ValueId b = graph.add_constant("b", random_constant(f32({16}), "b"));
  ValueId lo = graph.add_constant("lo", Tensor::from_vector<float>({0.0f}, {}));
  ValueId hi = graph.add_constant("hi", Tensor::from_vector<float>({0.6f}, {}));
  ValueId y = graph.add_value("y", f32({1, 16, 7, 7}));
  ValueId z = graph.add_value("z", f32({1, 16, 7, 7}));
  Attributes attrs;
  attrs.set("group", std::int64_t{16});
  attrs.set("strides", std::vector<std::int64_t>{2, 2});
  attrs.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
  graph.add_node("Conv", {x, w, b}, {y}, attrs);
  graph.add_node("Clip", {y, lo, hi}, {z});
  graph.add_output(z);
  for (int threads : {1, 2}) expect_matches_native(graph, threads, "depthwise conv + clip");
}

}  // namespace
}  // namespace collage::openblas_test
