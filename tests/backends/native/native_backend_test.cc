#include "collage/backends/native/native_backend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "collage/backends/native/conv_taps.h"
#include "collage/backends/native/conv_winograd.h"
#include "collage/backends/native/elementwise_fusion.h"
#include "collage/ir/error.h"

namespace collage {
namespace {

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

// Builds small graphs one op at a time.
class GraphBuilder {
 public:
  ValueId input(const std::string& name, Shape shape) {
    return graph_.add_input(name, f32(std::move(shape)));
  }
  ValueId scalar(float value) {
    return graph_.add_constant("c" + std::to_string(next_++),
                               Tensor::from_vector<float>({value}, {}));
  }
  ValueId constant(Tensor tensor) {
    return graph_.add_constant("c" + std::to_string(next_++), std::move(tensor));
  }
  ValueId op(const std::string& op_type, std::vector<ValueId> inputs, TensorType out,
             Attributes attributes = {}) {
    ValueId output = graph_.add_value("v" + std::to_string(next_++), std::move(out));
    graph_.add_node(op_type, std::move(inputs), {output}, std::move(attributes));
    return output;
  }
  ValueId op(const std::string& op_type, std::vector<ValueId> inputs, Shape shape) {
    return op(op_type, std::move(inputs), f32(std::move(shape)));
  }
  GraphBuilder& output(ValueId value) {
    graph_.add_output(value);
    return *this;
  }
  Graph& graph() { return graph_; }

 private:
  Graph graph_;
  int next_ = 0;
};

Tensor random_tensor(const TensorType& type, std::mt19937& rng) {
  Tensor tensor = Tensor::allocate(type);
  std::uniform_real_distribution<float> uniform(-3.0f, 3.0f);
  for (std::int64_t i = 0; i < tensor.numel(); ++i) tensor.data<float>()[i] = uniform(rng);
  return tensor;
}

std::vector<Tensor> run_kernel(Kernel& kernel, const Graph& graph, std::span<const Tensor> inputs) {
  std::vector<Tensor> outputs;
  for (ValueId output : graph.outputs()) outputs.push_back(Tensor::allocate(graph.type(output)));
  kernel.run(inputs, outputs);
  return outputs;
}

// Runs `graph` fused (the backend's compile) and unfused (the reference) on
// the same random inputs and expects the same outputs.
void expect_fused_matches_reference(const Graph& graph, int threads = 1) {
  std::mt19937 rng(42);
  std::vector<Tensor> inputs;
  for (ValueId input : graph.inputs()) inputs.push_back(random_tensor(graph.type(input), rng));
  Result<std::unique_ptr<Kernel>> fused = make_native_backend()->compile(graph, {threads});
  ASSERT_TRUE(fused.ok()) << fused.error();
  std::unique_ptr<Kernel> reference = compile_reference(graph, threads);
  const std::vector<Tensor> expected = run_kernel(*reference, graph, inputs);
  const std::vector<Tensor> actual = run_kernel(**fused, graph, inputs);
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t k = 0; k < actual.size(); ++k) {
    ASSERT_EQ(actual[k].type(), expected[k].type());
    for (std::int64_t i = 0; i < actual[k].numel(); ++i) {
      ASSERT_FLOAT_EQ(actual[k].data<float>()[i], expected[k].data<float>()[i])
          << "output " << k << " element " << i;
    }
  }
}

// PyTorch's exported erf GELU: x * 0.5 * (1 + erf(x / sqrt(2))).
Graph gelu_graph(Shape shape) {
  GraphBuilder b;
  ValueId x = b.input("x", shape);
  ValueId scaled = b.op("Div", {x, b.scalar(1.4142135f)}, shape);
  ValueId erf = b.op("Erf", {scaled}, shape);
  ValueId shifted = b.op("Add", {erf, b.scalar(1.0f)}, shape);
  ValueId product = b.op("Mul", {x, shifted}, shape);
  b.output(b.op("Mul", {product, b.scalar(0.5f)}, shape));
  return std::move(b.graph());
}

TEST(NativeBackendTest, FusedGeluMatchesTheReference) {
  expect_fused_matches_reference(gelu_graph({2, 3, 17}));
}

TEST(NativeBackendTest, FusedBiasAddReluWithChannelBroadcastMatchesTheReference) {
  GraphBuilder b;
  ValueId x = b.input("x", {2, 4, 5, 3});
  ValueId bias = b.input("bias", {4, 1, 1});
  ValueId sum = b.op("Add", {x, bias}, {2, 4, 5, 3});
  b.output(b.op("Relu", {sum}, {2, 4, 5, 3}));
  expect_fused_matches_reference(b.graph());
}

TEST(NativeBackendTest, FusedSiluWithSharedInputMatchesTheReference) {
  GraphBuilder b;
  ValueId x = b.input("x", {3, 33});
  ValueId sigmoid = b.op("Sigmoid", {x}, {3, 33});
  b.output(b.op("Mul", {x, sigmoid}, {3, 33}));
  expect_fused_matches_reference(b.graph());
}

TEST(NativeBackendTest, FusedDagWithAnIntermediateReadTwiceMatchesTheReference) {
  GraphBuilder b;
  ValueId x = b.input("x", {4, 6});
  ValueId y = b.input("y", {6});
  ValueId a = b.op("Add", {x, y}, {4, 6});
  ValueId sigmoid = b.op("Sigmoid", {a}, {4, 6});
  b.output(b.op("Mul", {a, sigmoid}, {4, 6}));
  expect_fused_matches_reference(b.graph());
}

TEST(NativeBackendTest, FusedTreeWhoseBranchesBroadcastDifferentlyMatchesTheReference) {
  // A branch computed on a small shape ([3,1]) joins one on the full shape:
  // the fused loop recomputes the small branch per output element.
  GraphBuilder b;
  ValueId x = b.input("x", {2, 3, 5});
  ValueId column = b.input("column", {3, 1});
  ValueId row = b.input("row", {5});
  ValueId left = b.op("Tanh", {b.op("Mul", {column, b.scalar(2.0f)}, {3, 1})}, {3, 1});
  ValueId right = b.op("Sub", {x, row}, {2, 3, 5});
  ValueId mean = b.op("Mean", {left, right, row}, {2, 3, 5});
  Attributes bounds;
  ValueId clipped = b.op("Clip", {mean, b.scalar(-0.5f), b.scalar(1.0f)}, f32({2, 3, 5}), bounds);
  b.output(b.op("Max", {clipped, b.op("Neg", {x}, {2, 3, 5})}, {2, 3, 5}));
  b.graph().opset = 13;
  expect_fused_matches_reference(b.graph());
}

TEST(NativeBackendTest, FusedChainAroundANonElementwiseOpMatchesTheReference) {
  GraphBuilder b;
  ValueId x = b.input("x", {4, 8});
  ValueId activated = b.op("Relu", {b.op("Add", {x, b.scalar(0.5f)}, {4, 8})}, {4, 8});
  Attributes perm;
  perm.set("perm", std::vector<std::int64_t>{1, 0});
  ValueId transposed = b.op("Transpose", {activated}, f32({8, 4}), perm);
  ValueId tail = b.op("Sigmoid", {b.op("Mul", {transposed, b.scalar(3.0f)}, {8, 4})}, {8, 4});
  b.output(tail).output(activated);
  expect_fused_matches_reference(b.graph());
}

TEST(NativeBackendTest, FusedKernelOnManyThreadsMatchesTheReference) {
  expect_fused_matches_reference(gelu_graph({8, 64, 129}), 2);
}

TEST(NativeBackendTest, GeluBecomesOneFusionGroupReadingXOnce) {
  const Graph graph = gelu_graph({2, 3});
  const std::vector<native::FusionGroup> groups = native::find_fusion_groups(graph);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].nodes.size(), 5u);
  EXPECT_EQ(groups[0].output, graph.outputs()[0]);
  // x plus the three scalar constants.
  ASSERT_EQ(groups[0].leaves.size(), 4u);
  EXPECT_EQ(groups[0].leaves[0], graph.inputs()[0]);
}

// x + bias -> Gelu(tanh) -> * 2 -> Swish(alpha 1.702) -> Gelu (erf).
Graph gelu_swish_chain(Shape shape) {
  GraphBuilder b;
  b.graph().opset = 17;
  ValueId x = b.input("x", shape);
  ValueId bias = b.input("bias", {shape.back()});
  Attributes tanh_form;
  tanh_form.set("approximate", std::string("tanh"));
  Attributes swish_alpha;
  swish_alpha.set("alpha", 1.702f);
  ValueId sum = b.op("Add", {x, bias}, shape);
  ValueId gelu = b.op("Gelu", {sum}, f32(shape), tanh_form);
  ValueId scaled = b.op("Mul", {gelu, b.scalar(2.0f)}, shape);
  ValueId swish = b.op("Swish", {scaled}, f32(shape), swish_alpha);
  b.output(b.op("Gelu", {swish}, shape));
  return std::move(b.graph());
}

TEST(NativeBackendTest, GeluAndSwishJoinOneFusionGroupWithTheirNeighbours) {
  const Graph graph = gelu_swish_chain({3, 40});
  const std::vector<native::FusionGroup> groups = native::find_fusion_groups(graph);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].nodes.size(), 5u);
}

TEST(NativeBackendTest, FusedGeluAndSwishChainMatchesTheReference) {
  expect_fused_matches_reference(gelu_swish_chain({3, 5, 40}));
  expect_fused_matches_reference(gelu_swish_chain({16, 700}), 2);
}

TEST(NativeBackendTest, AnIntermediateThatIsAGraphOutputEndsAGroup) {
  GraphBuilder b;
  ValueId x = b.input("x", {4});
  ValueId sum = b.op("Add", {x, x}, {4});
  ValueId relu = b.op("Relu", {sum}, {4});
  b.output(relu).output(sum);
  const std::vector<native::FusionGroup> groups = native::find_fusion_groups(b.graph());
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].nodes.size(), 1u);
  EXPECT_EQ(groups[1].nodes.size(), 1u);
}

TEST(NativeBackendTest, AValueReadOutsideTheGroupIsNotFusedIntoIt) {
  GraphBuilder b;
  ValueId x = b.input("x", {2, 2});
  ValueId exp = b.op("Exp", {x}, {2, 2});
  ValueId relu = b.op("Relu", {exp}, {2, 2});
  ValueId transposed = b.op("Transpose", {exp}, {2, 2});
  b.output(relu).output(transposed);
  const std::vector<native::FusionGroup> groups = native::find_fusion_groups(b.graph());
  ASSERT_EQ(groups.size(), 2u);
  for (const native::FusionGroup& group : groups) EXPECT_EQ(group.nodes.size(), 1u);
}

TEST(NativeBackendTest, ElementwiseOpsOnIntegersAreNotFused) {
  Graph graph;
  ValueId x = graph.add_input("x", TensorType{DType::kInt64, {2}});
  ValueId y = graph.add_value("y", TensorType{DType::kInt64, {2}});
  graph.add_node("Add", {x, x}, {y});
  graph.add_output(y);
  EXPECT_TRUE(native::find_fusion_groups(graph).empty());
}

TEST(NativeBackendTest, ReferenceKernelReusesBuffersAndStaysCorrectAcrossRuns) {
  // x[2,3] -> Transpose [3,2] -> Reshape [6] -> Slice [1:5] -> Concat with
  // itself [8] -> Reshape [2,4]: intermediates die along the way.
  GraphBuilder b;
  ValueId x = b.input("x", {2, 3});
  ValueId t = b.op("Transpose", {x}, {3, 2});
  ValueId flat =
      b.op("Reshape", {t, b.constant(Tensor::from_vector<std::int64_t>({-1}, {1}))}, {6});
  ValueId sliced = b.op("Slice",
                        {flat, b.constant(Tensor::from_vector<std::int64_t>({1}, {1})),
                         b.constant(Tensor::from_vector<std::int64_t>({5}, {1}))},
                        {4});
  Attributes axis;
  axis.set("axis", std::int64_t{0});
  ValueId twice = b.op("Concat", {sliced, sliced}, f32({8}), axis);
  b.output(
      b.op("Reshape", {twice, b.constant(Tensor::from_vector<std::int64_t>({2, 4}, {2}))}, {2, 4}));
  const Graph& graph = b.graph();
  std::unique_ptr<Kernel> kernel = compile_reference(graph, 1);
  for (int run = 0; run < 2; ++run) {
    const Tensor input = Tensor::from_vector<float>({0, 1, 2, 3, 4, 5}, {2, 3});
    const std::vector<Tensor> out = run_kernel(*kernel, graph, std::span(&input, 1));
    // Transposed: 0 3 1 4 2 5; sliced: 3 1 4 2.
    const std::vector<float> expected = {3, 1, 4, 2, 3, 1, 4, 2};
    EXPECT_EQ(std::vector<float>(out[0].data<float>(), out[0].data<float>() + 8), expected);
  }
}

// A Conv of `x_shape` by weights of `w_shape` (pads and the like in
// `attributes`) with constant weights, which the kernel transforms once when
// it is compiled, against the same Conv given the weights as an input,
// which each run transforms. Both sum the same products, so the outputs
// agree exactly, run after run. `fits` says the shapes take the strategy
// under test.
void expect_prepared_weights_match_given(const Shape& x_shape, const Shape& w_shape,
                                         const Shape& y_shape, const Attributes& attributes,
                                         bool (*fits)(const Graph&, const Node&)) {
  std::mt19937 rng(7);
  const Tensor weights = random_tensor(f32(w_shape), rng);
  const Tensor bias = random_tensor(f32({w_shape[0]}), rng);
  GraphBuilder constant;
  ValueId x = constant.input("x", x_shape);
  constant.output(constant.op("Conv", {x, constant.constant(weights), constant.constant(bias)},
                              f32(y_shape), attributes));
  GraphBuilder given;
  ValueId gx = given.input("x", x_shape);
  ValueId gw = given.input("w", w_shape);
  given.output(given.op("Conv", {gx, gw, given.constant(bias)}, f32(y_shape), attributes));
  const Graph& prepared_graph = constant.graph();
  const Graph& given_graph = given.graph();
  ASSERT_TRUE(fits(prepared_graph, prepared_graph.node(0)));
  std::unique_ptr<Kernel> prepared = compile_reference(prepared_graph, 2);
  std::unique_ptr<Kernel> per_run = compile_reference(given_graph, 2);
  for (int run = 0; run < 2; ++run) {
    const Tensor input = random_tensor(f32(x_shape), rng);
    const std::vector<Tensor> inputs = {input, weights};
    const std::vector<Tensor> a = run_kernel(*prepared, prepared_graph, std::span(&input, 1));
    const std::vector<Tensor> b = run_kernel(*per_run, given_graph, inputs);
    ASSERT_EQ(a[0].numel(), b[0].numel());
    for (std::int64_t i = 0; i < a[0].numel(); ++i) {
      ASSERT_EQ(a[0].data<float>()[i], b[0].data<float>()[i]) << "run " << run << " element " << i;
    }
  }
}

TEST(NativeBackendTest, WinogradConvWithConstantWeightsMatchesTheSameWeightsAsAnInput) {
  Attributes pads;
  pads.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
  expect_prepared_weights_match_given({1, 16, 21, 19}, {24, 16, 3, 3}, {1, 24, 21, 19}, pads,
                                      native::winograd_fits);
}

TEST(NativeBackendTest, ConvByTapsWithConstantWeightsMatchesTheSameWeightsAsAnInput) {
  // ASPP-like: dilation 5 on 6x6, "same" padding.
  Attributes attributes;
  attributes.set("pads", std::vector<std::int64_t>{5, 5, 5, 5});
  attributes.set("dilations", std::vector<std::int64_t>{5, 5});
  expect_prepared_weights_match_given({2, 12, 6, 6}, {10, 12, 3, 3}, {2, 10, 6, 6}, attributes,
                                      native::conv_by_taps_fits);
}

TEST(NativeBackendTest, KernelCopiesOutputsThatAreInputsOrConstants) {
  Graph graph;
  ValueId x = graph.add_input("x", f32({2}));
  ValueId c = graph.add_constant("c", Tensor::from_vector<float>({7, 8}, {2}));
  graph.add_output(x);
  graph.add_output(c);
  std::unique_ptr<Kernel> kernel = compile_reference(graph, 1);
  const Tensor input = Tensor::from_vector<float>({1, 2}, {2});
  const std::vector<Tensor> out = run_kernel(*kernel, graph, std::span(&input, 1));
  EXPECT_EQ(out[0].data<float>()[1], 2.0f);
  EXPECT_EQ(out[1].data<float>()[0], 7.0f);
}

TEST(NativeBackendTest, KernelRejectsAWrongNumberOfInputs) {
  const Graph graph = gelu_graph({2});
  std::unique_ptr<Kernel> kernel = compile_reference(graph, 1);
  std::vector<Tensor> outputs = {Tensor::allocate(f32({2}))};
  EXPECT_THROW(kernel->run({}, outputs), Error);
}

TEST(NativeBackendTest, KernelRejectsAnInputOfTheWrongShape) {
  const Graph graph = gelu_graph({2});
  std::unique_ptr<Kernel> kernel = compile_reference(graph, 1);
  const Tensor input = Tensor::allocate(f32({3}));
  std::vector<Tensor> outputs = {Tensor::allocate(f32({2}))};
  EXPECT_THROW(kernel->run(std::span(&input, 1), outputs), Error);
}

TEST(NativeBackendTest, CompilingAnElementwiseNodeWithAWrongOutputShapeIsAFailure) {
  GraphBuilder b;
  ValueId x = b.input("x", {2});
  b.output(b.op("Relu", {b.op("Add", {x, x}, {3})}, {3}));
  Result<std::unique_ptr<Kernel>> kernel = make_native_backend()->compile(b.graph(), {});
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().find("broadcast"), std::string::npos) << kernel.error();
}

Graph graph_with_unknown_ops() {
  GraphBuilder b;
  ValueId x = b.input("x", {2});
  ValueId v = x;
  for (int i = 0; i < 3; ++i) v = b.op("Frobnicate", {v}, {2});
  v = b.op("Relu", {v}, {2});
  b.output(b.op("Twiddle", {v}, {2}));
  return std::move(b.graph());
}

TEST(NativeBackendTest, CompilingAnUnsupportedNodeIsAFailureNamingIt) {
  Result<std::unique_ptr<Kernel>> kernel =
      make_native_backend()->compile(graph_with_unknown_ops(), {});
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().find("Frobnicate (3)"), std::string::npos) << kernel.error();
  EXPECT_NE(kernel.error().find("Twiddle (1)"), std::string::npos) << kernel.error();
}

TEST(NativeBackendTest, ReferenceErrorListsEveryUnsupportedOpWithCounts) {
  try {
    compile_reference(graph_with_unknown_ops(), 1);
    FAIL() << "compile_reference accepted unknown ops";
  } catch (const Error& error) {
    EXPECT_EQ(error.message(), "unsupported operators: Frobnicate (3), Twiddle (1)");
  }
}

TEST(NativeBackendTest, SupportsRequiresTheDefaultDomainAndAPassingCheck) {
  Graph graph;
  ValueId x = graph.add_input("x", f32({2}));
  ValueId y = graph.add_value("y", f32({2}));
  ValueId z = graph.add_value("z", TensorType{DType::kInt64, {2}});
  NodeId relu = graph.add_node("Relu", {x}, {y});
  NodeId int_relu = graph.add_node("Relu", {x}, {z});
  const std::unique_ptr<Backend> backend = make_native_backend();
  EXPECT_TRUE(backend->supports(graph, graph.node(relu)));
  EXPECT_FALSE(backend->supports(graph, graph.node(int_relu)));
  graph.node(relu).domain = "com.microsoft";
  EXPECT_FALSE(backend->supports(graph, graph.node(relu)));
}

TEST(NativeBackendTest, ClaimsGeluAndSwishOnlyInTheDefaultDomain) {
  const std::unique_ptr<Backend> backend = make_native_backend();
  for (const char* op : {"Gelu", "Swish"}) {
    SCOPED_TRACE(op);
    Graph graph;
    ValueId x = graph.add_input("x", f32({2, 3}));
    ValueId y = graph.add_value("y", f32({2, 3}));
    NodeId node = graph.add_node(op, {x}, {y});
    EXPECT_TRUE(backend->supports(graph, graph.node(node)));
    graph.node(node).domain = "com.microsoft";
    EXPECT_FALSE(backend->supports(graph, graph.node(node)));
  }
}

TEST(NativeBackendTest, DescribesItselfAsTheNativeCompiler) {
  const std::unique_ptr<Backend> backend = make_native_backend();
  EXPECT_EQ(backend->name(), "native");
  EXPECT_EQ(backend->version(), "collage-native 0.1");
  EXPECT_EQ(backend->style(), BackendStyle::kCompiler);
  const std::string support = backend->describe_support();
  EXPECT_NE(support.find("Relu"), std::string::npos);
  EXPECT_NE(support.find("Gather"), std::string::npos);
}

TEST(NativeBackendTest, EvaluatorComputesOneNodeWithTheGraphsTypes) {
  Graph graph;
  ValueId shape = graph.add_input("shape", TensorType{DType::kInt64, {3}});
  ValueId index = graph.add_constant("index", Tensor::from_vector<std::int64_t>({2}, {}));
  ValueId dim = graph.add_value("dim", TensorType{DType::kInt64, {}});
  const NodeId gather = graph.add_node("Gather", {shape, index}, {dim});
  const OpEvaluator& evaluator = native_evaluator();
  ASSERT_TRUE(evaluator.can_evaluate(graph, graph.node(gather)));
  const Tensor inputs[] = {Tensor::from_vector<std::int64_t>({1, 16, 49}, {3}),
                           *graph.value(index).constant};
  const std::vector<Tensor> out = evaluator.evaluate(graph, graph.node(gather), inputs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type(), (TensorType{DType::kInt64, {}}));
  EXPECT_EQ(out[0].data<std::int64_t>()[0], 49);
}

TEST(NativeBackendTest, EvaluatorCannotEvaluateUnknownOps) {
  const Graph graph = graph_with_unknown_ops();
  EXPECT_FALSE(native_evaluator().can_evaluate(graph, graph.node(0)));
}

}  // namespace
}  // namespace collage
