// The openblas backend's interface: identity, support predicates, patterns,
// and clean failures for partitions it cannot run.
#include <gtest/gtest.h>

#include <algorithm>

#include "backends/openblas/openblas_test_util.h"
#include "collage/ir/error.h"

namespace collage::openblas_test {
namespace {

// x -> Conv(w, b) -> Add(bias) -> Relu, with the Conv output optionally also a graph output.
Graph conv_add_relu(bool conv_is_output = false) {
  Graph graph;
  ValueId x = graph.add_input("x", f32({1, 3, 6, 6}));
  ValueId w = graph.add_constant("w", random_constant(f32({4, 3, 3, 3}), "w"));
  ValueId bias = graph.add_constant("bias", random_constant(f32({4, 1, 1}), "bias"));
  ValueId conv = graph.add_value("conv", f32({1, 4, 4, 4}));
  ValueId added = graph.add_value("added", f32({1, 4, 4, 4}));
  ValueId y = graph.add_value("y", f32({1, 4, 4, 4}));
  graph.add_node("Conv", {x, w}, {conv});
  graph.add_node("Add", {conv, bias}, {added});
  graph.add_node("Relu", {added}, {y});
  if (conv_is_output) graph.add_output(conv);
  graph.add_output(y);
  return graph;
}

// a [2,3] x b [3,4] -> y; y is the graph output unless `then` adds a consumer.
Graph matmul(DType dtype, bool y_is_output = true) {
  Graph graph;
  ValueId a = graph.add_input("a", TensorType{dtype, {2, 3}});
  ValueId b = graph.add_input("b", TensorType{dtype, {3, 4}});
  ValueId y = graph.add_value("y", TensorType{dtype, {2, 4}});
  graph.add_node("MatMul", {a, b}, {y});
  if (y_is_output) graph.add_output(y);
  return graph;
}

// The MatMul's result value.
ValueId product(const Graph& graph) { return graph.node(0).outputs[0]; }

TEST(OpenBlasBackendTest, IsALibraryNamedOpenblasReportingTheRealOpenBlasVersion) {
  EXPECT_EQ(backend().name(), "openblas");
  EXPECT_EQ(backend().style(), BackendStyle::kLibrary);
  EXPECT_EQ(backend().version().rfind("OpenBLAS 0.", 0), 0u) << backend().version();
}

TEST(OpenBlasBackendTest, SupportsFloatConvButNotTheOpsThatFollowIt) {
  Graph graph = conv_add_relu();
  EXPECT_TRUE(backend().supports(graph, graph.node(0)));
  EXPECT_FALSE(backend().supports(graph, graph.node(1)));
  EXPECT_FALSE(backend().supports(graph, graph.node(2)));
}

TEST(OpenBlasBackendTest, RejectsIntegerMatMul) {
  Graph graph = matmul(DType::kInt32);
  EXPECT_FALSE(backend().supports(graph, graph.node(0)));
  Result<std::unique_ptr<Kernel>> kernel = backend().compile(graph, CompileOptions{1});
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().find("float32"), std::string::npos) << kernel.error();
}

TEST(OpenBlasBackendTest, RejectsOpsOfOtherDomains) {
  Graph graph = matmul(DType::kFloat32);
  graph.node(0).domain = "com.microsoft";
  EXPECT_FALSE(backend().supports(graph, graph.node(0)));
}

TEST(OpenBlasBackendTest, ConvAddActivationPatternMatchesTheWholeChain) {
  Graph graph = conv_add_relu();
  std::vector<NamedPattern> patterns = backend().patterns();
  auto it = std::find_if(patterns.begin(), patterns.end(),
                         [](const NamedPattern& p) { return p.name == "conv_add_activation"; });
  ASSERT_NE(it, patterns.end());
  std::optional<std::vector<NodeId>> matched = match(it->pattern, graph, 2);
  ASSERT_TRUE(matched.has_value());
  EXPECT_EQ(*matched, (std::vector<NodeId>{0, 1, 2}));
}

TEST(OpenBlasBackendTest, GemmAddPatternMatchesAMatMulWithItsBiasOnEitherSide) {
  Graph graph;
  ValueId a = graph.add_input("a", f32({2, 3}));
  ValueId b = graph.add_constant("b", random_constant(f32({3, 4}), "b"));
  ValueId bias = graph.add_constant("bias", random_constant(f32({4}), "bias"));
  ValueId y = graph.add_value("y", f32({2, 4}));
  ValueId z = graph.add_value("z", f32({2, 4}));
  graph.add_node("MatMul", {a, b}, {y});
  graph.add_node("Add", {bias, y}, {z});
  graph.add_output(z);
  std::vector<NamedPattern> patterns = backend().patterns();
  auto it = std::find_if(patterns.begin(), patterns.end(),
                         [](const NamedPattern& p) { return p.name == "gemm_add"; });
  ASSERT_NE(it, patterns.end());
  std::optional<std::vector<NodeId>> matched = match(it->pattern, graph, 1);
  ASSERT_TRUE(matched.has_value());
  EXPECT_EQ(*matched, (std::vector<NodeId>{0, 1}));
}

// a [2,3] x b [3,4] -> `activation` -> z.
Graph matmul_then(const std::string& activation, const std::string& domain = "") {
  Graph graph = matmul(DType::kFloat32, false);
  ValueId z = graph.add_value("z", f32({2, 4}));
  NodeId node = graph.add_node(activation, {product(graph)}, {z});
  graph.node(node).domain = domain;
  graph.add_output(z);
  return graph;
}

const Pattern* gemm_activation_pattern(const std::vector<NamedPattern>& patterns) {
  auto it = std::find_if(patterns.begin(), patterns.end(),
                         [](const NamedPattern& p) { return p.name == "gemm_activation"; });
  return it == patterns.end() ? nullptr : &it->pattern;
}

TEST(OpenBlasBackendTest, GemmActivationPatternCoversGeluSwishAndHardSwish) {
  const std::vector<NamedPattern> patterns = backend().patterns();
  const Pattern* pattern = gemm_activation_pattern(patterns);
  ASSERT_NE(pattern, nullptr);
  for (const char* activation : {"Gelu", "Swish", "HardSwish"}) {
    EXPECT_EQ(match(*pattern, matmul_then(activation), 1), (std::vector<NodeId>{0, 1}))
        << activation;
  }
}

TEST(OpenBlasBackendTest, GeluAndSwishOfAnotherDomainAreNotFused) {
  const std::vector<NamedPattern> patterns = backend().patterns();
  const Pattern* pattern = gemm_activation_pattern(patterns);
  ASSERT_NE(pattern, nullptr);
  for (const char* activation : {"Gelu", "Swish"}) {
    Graph graph = matmul_then(activation, "com.microsoft");
    EXPECT_FALSE(match(*pattern, graph, 1).has_value()) << activation;
    EXPECT_FALSE(backend().compile(graph, CompileOptions{1}).ok()) << activation;
  }
}

TEST(OpenBlasBackendTest, PatternsDoNotMatchAnActivationOfAnUnsupportedHead) {
  Graph graph = matmul(DType::kInt32, false);
  ValueId z = graph.add_value("z", TensorType{DType::kInt32, {2, 4}});
  graph.add_node("Relu", {product(graph)}, {z});
  graph.add_output(z);
  for (const NamedPattern& p : backend().patterns()) {
    EXPECT_FALSE(match(p.pattern, graph, 1).has_value()) << p.name;
  }
}

TEST(OpenBlasBackendTest, CompileFailsForAPartitionWithoutAHeadOp) {
  Graph graph;
  ValueId x = graph.add_input("x", f32({4}));
  ValueId y = graph.add_value("y", f32({4}));
  graph.add_node("Relu", {x}, {y});
  graph.add_output(y);
  Result<std::unique_ptr<Kernel>> kernel = backend().compile(graph, CompileOptions{1});
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().find("Relu"), std::string::npos) << kernel.error();
}

TEST(OpenBlasBackendTest, CompileFailsWhenAnIntermediateResultIsAlsoAnOutput) {
  Result<std::unique_ptr<Kernel>> kernel =
      backend().compile(conv_add_relu(/*conv_is_output=*/true), CompileOptions{1});
  EXPECT_FALSE(kernel.ok());
}

TEST(OpenBlasBackendTest, CompileFailsForAClipWithRuntimeBounds) {
  Graph graph = matmul(DType::kFloat32, false);
  ValueId lo = graph.add_input("lo", f32({}));
  ValueId z = graph.add_value("z", f32({2, 4}));
  graph.add_node("Clip", {product(graph), lo}, {z});
  graph.add_output(z);
  Result<std::unique_ptr<Kernel>> kernel = backend().compile(graph, CompileOptions{1});
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().find("constant"), std::string::npos) << kernel.error();
}

TEST(OpenBlasBackendTest, CompileFailsForAnOpThatCannotFollowTheHead) {
  Graph graph = matmul(DType::kFloat32, false);
  ValueId z = graph.add_value("z", f32({4, 2}));
  Attributes attrs;
  attrs.set("perm", std::vector<std::int64_t>{1, 0});
  graph.add_node("Transpose", {product(graph)}, {z}, attrs);
  graph.add_output(z);
  Result<std::unique_ptr<Kernel>> kernel = backend().compile(graph, CompileOptions{1});
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().find("Transpose"), std::string::npos) << kernel.error();
}

TEST(OpenBlasBackendTest, CompileFailsForAnAddThatWouldBroadcastTheResultUp) {
  Graph graph = matmul(DType::kFloat32, false);
  ValueId big = graph.add_input("big", f32({3, 2, 4}));
  ValueId z = graph.add_value("z", f32({3, 2, 4}));
  graph.add_node("Add", {product(graph), big}, {z});
  graph.add_output(z);
  EXPECT_FALSE(backend().compile(graph, CompileOptions{1}).ok());
}

TEST(OpenBlasBackendTest, CompileFailsForAnOutputShapeThatDisagreesWithTheOp) {
  Graph graph;
  ValueId a = graph.add_input("a", f32({2, 3}));
  ValueId b = graph.add_input("b", f32({3, 4}));
  ValueId y = graph.add_value("y", f32({2, 5}));
  graph.add_node("MatMul", {a, b}, {y});
  graph.add_output(y);
  EXPECT_FALSE(backend().supports(graph, graph.node(0)));
  EXPECT_FALSE(backend().compile(graph, CompileOptions{1}).ok());
}

TEST(OpenBlasBackendTest, CompileFailsForAMalformedAttributeInsteadOfThrowing) {
  Graph graph = matmul(DType::kFloat32);
  graph.node(0).op_type = "Gemm";
  graph.node(0).attributes.set("transA", std::string("yes"));
  EXPECT_FALSE(backend().supports(graph, graph.node(0)));
  EXPECT_FALSE(backend().compile(graph, CompileOptions{1}).ok());
}

TEST(OpenBlasBackendTest, KernelRejectsInputsOfTheWrongShape) {
  Graph graph = matmul(DType::kFloat32);
  std::unique_ptr<Kernel> kernel = compile(graph);
  ASSERT_NE(kernel, nullptr);
  std::vector<Tensor> inputs = {Tensor::zeros(f32({2, 3})), Tensor::zeros(f32({3, 5}))};
  std::vector<Tensor> outputs = {Tensor::allocate(f32({2, 4}))};
  EXPECT_THROW(kernel->run(inputs, outputs), Error);
}

TEST(OpenBlasBackendTest, AKernelCanRunManyTimesWithFreshData) {
  Graph graph = matmul(DType::kFloat32);
  std::unique_ptr<Kernel> kernel = compile(graph);
  ASSERT_NE(kernel, nullptr);
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    std::vector<Tensor> inputs = inputs_for(graph, seed);
    Tensor out = run(*kernel, graph, inputs);
    float expected = 0;
    for (int p = 0; p < 3; ++p)
      expected += inputs[0].data<float>()[p] * inputs[1].data<float>()[p * 4];
    EXPECT_NEAR(out.data<float>()[0], expected, 1e-5);
  }
}

}  // namespace
}  // namespace collage::openblas_test
