// Gemm and MatMul on the openblas backend, against naive loops.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "backends/openblas/naive_reference.h"
#include "backends/openblas/openblas_test_util.h"
#include "collage/backends/openblas/batched_gemm.h"

namespace collage::openblas_test {
namespace {

struct GemmCase {
  bool trans_a;
  bool trans_b;
  float alpha;
  float beta;
  // nullopt: no C.
  std::optional<Shape> c_shape;
};

Graph gemm_graph(std::int64_t m, std::int64_t n, std::int64_t k, const GemmCase& g,
                 bool constant_b = false) {
  Graph graph;
  Shape a_shape = g.trans_a ? Shape{k, m} : Shape{m, k};
  Shape b_shape = g.trans_b ? Shape{n, k} : Shape{k, n};
  ValueId a = graph.add_input("a", f32(a_shape));
  ValueId b = constant_b ? graph.add_constant("b", random_constant(f32(b_shape), "b"))
                         : graph.add_input("b", f32(b_shape));
  std::vector<ValueId> inputs = {a, b};
  if (g.c_shape) inputs.push_back(graph.add_input("c", f32(*g.c_shape)));
  ValueId y = graph.add_value("y", f32({m, n}));
  Attributes attrs;
  attrs.set("transA", std::int64_t{g.trans_a});
  attrs.set("transB", std::int64_t{g.trans_b});
  attrs.set("alpha", g.alpha);
  attrs.set("beta", g.beta);
  graph.add_node("Gemm", inputs, {y}, attrs);
  graph.add_output(y);
  return graph;
}

Graph matmul_graph(const Shape& a_shape, const Shape& b_shape, const Shape& y_shape) {
  Graph graph;
  ValueId a = graph.add_input("a", f32(a_shape));
  ValueId b = graph.add_input("b", f32(b_shape));
  ValueId y = graph.add_value("y", f32(y_shape));
  graph.add_node("MatMul", {a, b}, {y});
  graph.add_output(y);
  return graph;
}

TEST(OpenBlasGemmTest, MatchesNaiveLoopsForEveryTransposeAlphaBetaAndShapeOfC) {
  const std::int64_t m = 7, n = 5, k = 9;
  std::vector<std::optional<Shape>> c_shapes = {std::nullopt, Shape{},     Shape{n},
                                                Shape{1, n},  Shape{m, 1}, Shape{m, n}};
  for (bool trans_a : {false, true}) {
    for (bool trans_b : {false, true}) {
      for (const auto& c_shape : c_shapes) {
        GemmCase g{trans_a, trans_b, 0.5f, 2.0f, c_shape};
        Graph graph = gemm_graph(m, n, k, g);
        std::vector<Tensor> inputs = inputs_for(graph);
        Tensor expected = naive_gemm(inputs[0], inputs[1], c_shape ? inputs[2] : Tensor{}, trans_a,
                                     trans_b, g.alpha, g.beta);
        EXPECT_TRUE(all_close(compile_and_run(graph, inputs), expected))
            << "transA=" << trans_a << " transB=" << trans_b
            << " C=" << (c_shape ? shape_to_string(*c_shape) : "none");
      }
    }
  }
}

TEST(OpenBlasGemmTest, SingleRowAndSingleColumnProductsMatchNaiveLoops) {
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{1, 13}, {11, 1}, {1, 1}};
  for (const auto& [m, n] : shapes) {
    for (bool trans_a : {false, true}) {
      for (bool trans_b : {false, true}) {
        for (bool constant_b : {false, true}) {
          GemmCase g{trans_a, trans_b, 1.5f, 1.0f, Shape{n}};
          Graph graph = gemm_graph(m, n, 17, g, constant_b);
          std::vector<Tensor> inputs = inputs_for(graph);
          const Tensor b = constant_b ? *graph.value(*graph.find_value("b")).constant : inputs[1];
          const Tensor& c = inputs.back();
          Tensor expected = naive_gemm(inputs[0], b, c, trans_a, trans_b, g.alpha, g.beta);
          EXPECT_TRUE(all_close(compile_and_run(graph, inputs), expected))
              << "m=" << m << " n=" << n << " transA=" << trans_a << " transB=" << trans_b
              << " constant B=" << constant_b;
        }
      }
    }
  }
}

TEST(OpenBlasGemmTest, PrepackedConstantTransposedWeightsGiveTheSameResult) {
  GemmCase g{false, true, 1.0f, 1.0f, Shape{16}};
  Graph graph = gemm_graph(8, 16, 32, g, /*constant_b=*/true);
  std::vector<Tensor> inputs = inputs_for(graph);
  const Tensor& b = *graph.value(*graph.find_value("b")).constant;
  Tensor expected = naive_gemm(inputs[0], b, inputs[1], false, true, 1.0f, 1.0f);
  EXPECT_TRUE(all_close(compile_and_run(graph, inputs), expected));
}

TEST(OpenBlasGemmTest, LargeGemmOnTwoThreadsMatchesNaiveLoops) {
  GemmCase g{true, false, 1.0f, 1.0f, Shape{1, 96}};
  Graph graph = gemm_graph(128, 96, 200, g);
  std::vector<Tensor> inputs = inputs_for(graph);
  Tensor expected = naive_gemm(inputs[0], inputs[1], inputs[2], true, false, 1.0f, 1.0f);
  EXPECT_TRUE(all_close(compile_and_run(graph, inputs, 2), expected));
}

TEST(OpenBlasMatMulTest, MatchesNaiveLoopsForBatchedBroadcastAndVectorOperands) {
  struct Case {
    Shape a, b, y;
  };
  const Case cases[] = {
      {{6, 4}, {4, 5}, {6, 5}},
      {{2, 3, 6, 4}, {4, 5}, {2, 3, 6, 5}},
      {{6, 4}, {3, 4, 5}, {3, 6, 5}},
      {{2, 1, 6, 4}, {3, 4, 5}, {2, 3, 6, 5}},
      {{3, 6, 4}, {1, 4, 5}, {3, 6, 5}},
      {{4}, {2, 4, 5}, {2, 5}},
      {{2, 6, 4}, {4}, {2, 6}},
      {{6, 4}, {4}, {6}},
      {{4}, {4, 5}, {5}},
      {{4}, {4}, {}},
      {{1, 6, 4}, {2, 4, 5}, {2, 6, 5}},
  };
  for (const Case& c : cases) {
    Graph graph = matmul_graph(c.a, c.b, c.y);
    std::vector<Tensor> inputs = inputs_for(graph);
    EXPECT_TRUE(all_close(compile_and_run(graph, inputs), naive_matmul(inputs[0], inputs[1])))
        << shape_to_string(c.a) << " x " << shape_to_string(c.b);
  }
}

TEST(OpenBlasMatMulTest, BatchedAttentionProductsOnTwoThreadsMatchNaiveLoops) {
  Graph graph = matmul_graph({4, 32, 16}, {4, 16, 32}, {4, 32, 32});
  std::vector<Tensor> inputs = inputs_for(graph);
  EXPECT_TRUE(all_close(compile_and_run(graph, inputs, 2), naive_matmul(inputs[0], inputs[1])));
}

TEST(OpenBlasMatMulTest, ABatchSharingTheRightOperandBecomesOneProduct) {
  Graph graph = matmul_graph({2, 3, 6, 4}, {4, 5}, {2, 3, 6, 5});
  Result<openblas::GemmGeometry> geometry = openblas::analyze_matmul(graph, graph.node(0));
  ASSERT_TRUE(geometry.ok()) << geometry.error();
  openblas::BatchedGemm gemm(*geometry, openblas::Operand{0}, openblas::Operand{1}, 2);
  EXPECT_EQ(gemm.products(), 1u);
}

TEST(OpenBlasMatMulTest, ManySmallProductsRunSideBySideOnSeveralThreads) {
  Graph graph = matmul_graph({4, 32, 16}, {4, 16, 32}, {4, 32, 32});
  Result<openblas::GemmGeometry> geometry = openblas::analyze_matmul(graph, graph.node(0));
  ASSERT_TRUE(geometry.ok()) << geometry.error();
  openblas::BatchedGemm gemm(*geometry, openblas::Operand{0}, openblas::Operand{1}, 2);
  EXPECT_EQ(gemm.products(), 4u);
  EXPECT_TRUE(gemm.batch_parallel());
}

TEST(OpenBlasMatMulTest, IncompatibleBatchDimensionsAreRejected) {
  Graph graph = matmul_graph({2, 6, 4}, {3, 4, 5}, {3, 6, 5});
  EXPECT_FALSE(backend().supports(graph, graph.node(0)));
  Result<std::unique_ptr<Kernel>> kernel = backend().compile(graph, CompileOptions{1});
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().find("broadcast"), std::string::npos) << kernel.error();
}

}  // namespace
}  // namespace collage::openblas_test
