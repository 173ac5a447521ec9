// Partitions with a fused epilogue (bias, residual, activations) on the
// openblas backend, against naive loops followed by the same elementwise math.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "backends/openblas/naive_reference.h"
#include "backends/openblas/openblas_test_util.h"
#include "collage/backends/openblas/epilogue.h"

namespace collage::openblas_test {
namespace {

// Appends `op_type` reading `input` (and `extra` inputs) to `graph`; returns its output.
ValueId append(Graph& graph, const std::string& op_type, std::vector<ValueId> inputs,
               Attributes attrs = {}) {
  const TensorType type = graph.type(inputs[0]);
  ValueId out = graph.add_value(op_type + "_" + std::to_string(graph.num_nodes()), type);
  graph.add_node(op_type, std::move(inputs), {out}, std::move(attrs));
  return out;
}

void apply(Tensor& t, const std::function<float(float)>& f) {
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = f(t.data<float>()[i]);
}

TEST(OpenBlasFusedEpilogueTest, ConvBiasReluMatchesConvThenBiasThenRelu) {
  Graph graph;
  ValueId x = graph.add_input("x", f32({2, 4, 8, 8}));
  Tensor w = random_constant(f32({6, 4, 3, 3}), "w");
  Tensor bias = random_constant(f32({1, 6, 1, 1}), "bias");
  ValueId conv = graph.add_value("conv", f32({2, 6, 8, 8}));
  Attributes attrs;
  attrs.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
  graph.add_node("Conv", {x, graph.add_constant("w", w)}, {conv}, attrs);
  ValueId added = append(graph, "Add", {conv, graph.add_constant("bias", bias)});
  graph.add_output(append(graph, "Relu", {added}));

  std::vector<Tensor> inputs = inputs_for(graph);
  NaiveConv p;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  Tensor expected = naive_conv2d(inputs[0], w, bias.reshaped({6}), p);
  apply(expected, [](float v) { return std::max(v, 0.0f); });
  for (int threads : {1, 2}) {
    EXPECT_TRUE(all_close(compile_and_run(graph, inputs, threads), expected)) << threads;
  }
}

TEST(OpenBlasFusedEpilogueTest, ConvWithBiasInputPlusResidualAddMatchesNaiveLoops) {
  Graph graph;
  ValueId x = graph.add_input("x", f32({1, 4, 5, 5}));
  ValueId skip = graph.add_input("skip", f32({1, 4, 5, 5}));
  Tensor w = random_constant(f32({4, 4, 1, 1}), "w");
  Tensor b = random_constant(f32({4}), "b");
  ValueId conv = graph.add_value("conv", f32({1, 4, 5, 5}));
  graph.add_node("Conv", {x, graph.add_constant("w", w), graph.add_constant("b", b)}, {conv});
  // The residual is the first input of the Add: order must not matter.
  ValueId added = append(graph, "Add", {skip, conv});
  graph.add_output(append(graph, "Relu", {added}));

  std::vector<Tensor> inputs = inputs_for(graph);
  Tensor expected = naive_conv2d(inputs[0], w, b, NaiveConv{});
  for (std::int64_t i = 0; i < expected.numel(); ++i) {
    expected.data<float>()[i] =
        std::max(expected.data<float>()[i] + inputs[1].data<float>()[i], 0.0f);
  }
  EXPECT_TRUE(all_close(compile_and_run(graph, inputs), expected));
}

TEST(OpenBlasFusedEpilogueTest, EveryActivationMatchesItsDefinitionAfterAMatMul) {
  struct Case {
    std::string op;
    Attributes attrs;
    std::function<float(float)> f;
  };
  Attributes leaky;
  leaky.set("alpha", 0.1f);
  Attributes hard_sigmoid;
  hard_sigmoid.set("alpha", 0.25f);
  hard_sigmoid.set("beta", 0.4f);
  Attributes elu;
  elu.set("alpha", 0.7f);
  Attributes gelu_tanh;
  gelu_tanh.set("approximate", std::string("tanh"));
  Attributes swish;
  swish.set("alpha", 1.702f);
  const std::vector<Case> cases = {
      {"Relu", {}, [](float v) { return std::max(v, 0.0f); }},
      {"LeakyRelu", leaky, [](float v) { return v < 0 ? 0.1f * v : v; }},
      {"Sigmoid", {}, [](float v) { return 1.0f / (1.0f + std::exp(-v)); }},
      {"Tanh", {}, [](float v) { return std::tanh(v); }},
      {"HardSigmoid", hard_sigmoid,
       [](float v) { return std::clamp(0.25f * v + 0.4f, 0.0f, 1.0f); }},
      {"HardSwish", {}, [](float v) { return v * std::clamp(v / 6.0f + 0.5f, 0.0f, 1.0f); }},
      {"Elu", elu, [](float v) { return v < 0 ? 0.7f * (std::exp(v) - 1.0f) : v; }},
      {"Gelu", {}, [](float v) { return 0.5f * v * (1.0f + std::erf(v / std::sqrt(2.0f))); }},
      {"Gelu", gelu_tanh,
       [](float v) {
         return 0.5f * v *
                (1.0f + std::tanh(std::sqrt(2.0f / 3.14159265f) * (v + 0.044715f * v * v * v)));
       }},
      {"Swish", {}, [](float v) { return v / (1.0f + std::exp(-v)); }},
      {"Swish", swish, [](float v) { return v / (1.0f + std::exp(-1.702f * v)); }},
  };
  for (const Case& c : cases) {
    Graph graph;
    graph.opset = 20;
    ValueId a = graph.add_input("a", f32({3, 8, 16}));
    ValueId b = graph.add_input("b", f32({16, 12}));
    ValueId y = graph.add_value("y", f32({3, 8, 12}));
    graph.add_node("MatMul", {a, b}, {y});
    graph.add_output(append(graph, c.op, {y}, c.attrs));
    std::vector<Tensor> inputs = inputs_for(graph);
    // Scaled up so that the activations see values well outside [-1, 1].
    for (std::int64_t i = 0; i < inputs[0].numel(); ++i) inputs[0].data<float>()[i] *= 3.0f;
    Tensor expected = naive_matmul(inputs[0], inputs[1]);
    apply(expected, c.f);
    EXPECT_TRUE(all_close(compile_and_run(graph, inputs), expected, 1e-4, 1e-5)) << c.op;
  }
}

TEST(OpenBlasFusedEpilogueTest, ClipBoundsComeFromConstantInputsOrAttributes) {
  for (std::int64_t opset : {6, 13}) {
    Graph graph;
    graph.opset = opset;
    ValueId a = graph.add_input("a", f32({4, 8}));
    ValueId b = graph.add_input("b", f32({8, 4}));
    ValueId y = graph.add_value("y", f32({4, 4}));
    graph.add_node("MatMul", {a, b}, {y});
    Attributes attrs;
    std::vector<ValueId> clip_inputs = {y};
    if (opset < 11) {
      attrs.set("min", 0.0f);
      attrs.set("max", 0.5f);
    } else {
      clip_inputs.push_back(graph.add_constant("lo", Tensor::from_vector<float>({0.0f}, {})));
      clip_inputs.push_back(graph.add_constant("hi", Tensor::from_vector<float>({0.5f}, {})));
    }
    graph.add_output(append(graph, "Clip", clip_inputs, attrs));
    std::vector<Tensor> inputs = inputs_for(graph);
    Tensor expected = naive_matmul(inputs[0], inputs[1]);
    apply(expected, [](float v) { return std::clamp(v, 0.0f, 0.5f); });
    EXPECT_TRUE(all_close(compile_and_run(graph, inputs), expected)) << "opset " << opset;
  }
}

TEST(OpenBlasFusedEpilogueTest, GemmWithCThenBiasAddThenGeluAddsBothBeforeTheActivation) {
  Graph graph;
  graph.opset = 20;
  ValueId a = graph.add_input("a", f32({6, 10}));
  Tensor w = random_constant(f32({12, 10}), "w");
  Tensor c = random_constant(f32({12}), "c");
  Tensor bias = random_constant(f32({6, 1}), "bias");
  ValueId y = graph.add_value("y", f32({6, 12}));
  Attributes attrs;
  attrs.set("transB", std::int64_t{1});
  attrs.set("beta", 0.5f);
  graph.add_node("Gemm", {a, graph.add_constant("w", w), graph.add_constant("c", c)}, {y}, attrs);
  ValueId added = append(graph, "Add", {y, graph.add_constant("bias", bias)});
  graph.add_output(append(graph, "Gelu", {added}));

  std::vector<Tensor> inputs = inputs_for(graph);
  Tensor expected = naive_gemm(inputs[0], w, c, false, true, 1.0f, 0.5f);
  for (std::int64_t i = 0; i < 6; ++i) {
    for (std::int64_t j = 0; j < 12; ++j) {
      float& v = expected.data<float>()[i * 12 + j];
      v += bias.data<float>()[i];
      v = 0.5f * v * (1.0f + std::erf(v / std::sqrt(2.0f)));
    }
  }
  EXPECT_TRUE(all_close(compile_and_run(graph, inputs), expected));
}

TEST(OpenBlasFusedEpilogueTest, StepsRunInNodeOrderSoAnAddAfterReluIsNotClamped) {
  Graph graph;
  ValueId a = graph.add_input("a", f32({5, 7}));
  ValueId b = graph.add_input("b", f32({7, 9}));
  ValueId r = graph.add_input("r", f32({9}));
  ValueId y = graph.add_value("y", f32({5, 9}));
  graph.add_node("MatMul", {a, b}, {y});
  ValueId relu = append(graph, "Relu", {y});
  graph.add_output(append(graph, "Add", {relu, r}));
  std::vector<Tensor> inputs = inputs_for(graph);
  Tensor expected = naive_matmul(inputs[0], inputs[1]);
  for (std::int64_t i = 0; i < 5; ++i) {
    for (std::int64_t j = 0; j < 9; ++j) {
      float& v = expected.data<float>()[i * 9 + j];
      v = std::max(v, 0.0f) + inputs[2].data<float>()[j];
    }
  }
  EXPECT_TRUE(all_close(compile_and_run(graph, inputs), expected));
}

TEST(OpenBlasFusedEpilogueTest, EpilogueBroadcastsEveryAddendShapeOntoTheOutput) {
  const Shape output = {2, 3, 4, 5};
  const std::vector<Shape> shapes = {{},           {5},          {4, 1},
                                     {3, 1, 1},    {1, 3, 4, 5}, {2, 1, 4, 1},
                                     {2, 3, 1, 5}, {2, 3, 4, 5}, {1, 1, 1, 1}};
  for (const Shape& shape : shapes) {
    Tensor addend = random_constant(f32(shape), "addend");
    openblas::Operand operand;
    operand.constant = addend;
    operand.shape = shape;
    Result<openblas::Epilogue> epilogue =
        openblas::Epilogue::plan(output, {openblas::Addend{operand, 2.0f}});
    ASSERT_TRUE(epilogue.ok()) << epilogue.error();
    Tensor out = Tensor::zeros(f32(output));
    epilogue->apply({}, out.data<float>(), 1);

    // Reference: index the addend with broadcasting, dim by dim.
    Shape aligned(output.size() - shape.size(), 1);
    aligned.insert(aligned.end(), shape.begin(), shape.end());
    bool same = true;
    for (std::int64_t i = 0; i < out.numel() && same; ++i) {
      std::int64_t rest = i;
      std::int64_t offset = 0;
      std::int64_t stride = 1;
      for (std::size_t d = output.size(); d-- > 0;) {
        std::int64_t index = rest % output[d];
        rest /= output[d];
        offset += (aligned[d] == 1 ? 0 : index) * stride;
        stride *= aligned[d];
      }
      same = out.data<float>()[i] == 2.0f * addend.data<float>()[offset];
    }
    EXPECT_TRUE(same) << shape_to_string(shape);
  }
}

TEST(OpenBlasFusedEpilogueTest, AnAddendThatWouldGrowTheOutputIsRejected) {
  openblas::Operand operand;
  operand.constant = random_constant(f32({3, 4}), "addend");
  operand.shape = {3, 4};
  EXPECT_FALSE(openblas::Epilogue::plan({1, 4}, {openblas::Addend{operand, 1.0f}}).ok());
  EXPECT_FALSE(openblas::Epilogue::plan({4}, {openblas::Addend{operand, 1.0f}}).ok());
}

}  // namespace
}  // namespace collage::openblas_test
