#include "collage/onnx/exporter.h"

#include <gtest/gtest.h>

#include "collage/ir/passes/partial_type.h"
#include "collage/ir/structural_hash.h"
#include "collage/onnx/importer.h"
#include "onnx/reference_run.h"
#include "onnx/temp_dir.h"

namespace collage {
namespace {

using testing::TempDir;

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

// A graph using every attribute kind, an omitted optional input and a weight.
Graph sample_graph() {
  Graph g;
  g.opset = 13;
  ValueId x = g.add_input("x", f32({1, 2, 4, 4}));
  Tensor weights = Tensor::allocate(f32({4, 2, 3, 3}));
  for (std::int64_t i = 0; i < weights.numel(); ++i) weights.data<float>()[i] = 0.01f * i;
  ValueId w = g.add_constant("w", weights);
  ValueId conv = g.add_value("conv", f32({1, 4, 4, 4}));
  ValueId clipped = g.add_value("clipped", f32({1, 4, 4, 4}));
  ValueId y = g.add_value("y", f32({1, 4, 4, 4}));
  ValueId max = g.add_constant("max", Tensor::from_vector<float>({6.0f}, {}));
  Attributes conv_attributes;
  conv_attributes.set("kernel_shape", std::vector<std::int64_t>{3, 3});
  conv_attributes.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
  conv_attributes.set("auto_pad", std::string("NOTSET"));
  conv_attributes.set("group", std::int64_t{1});
  g.add_node("Conv", {x, w}, {conv}, conv_attributes, "conv_node");
  g.add_node("Clip", {conv, kNoValue, max}, {clipped}, {}, "clip_node");
  Attributes custom;
  custom.set("alpha", 0.5f);
  custom.set("scales", std::vector<float>{1.0f, 2.0f});
  custom.set("names", std::vector<std::string>{"a", "b"});
  custom.set("table", Tensor::from_vector<std::int64_t>({1, 2, 3}, {3}));
  g.add_node("LeakyRelu", {clipped}, {y}, custom, "leaky_node");
  g.add_output(y);
  return g;
}

TEST(ExporterTest, ASavedGraphImportsWithTheSameStructureAndData) {
  TempDir dir;
  Graph original = sample_graph();
  save_onnx(original, dir.file("sample.onnx"));
  ImportOptions options;
  options.canonicalize = false;
  Graph back = import_onnx(dir.file("sample.onnx"), options);
  EXPECT_EQ(structural_hash(back), structural_hash(original));
  const Tensor& w = *back.value(*back.find_value("w")).constant;
  EXPECT_FLOAT_EQ(w.data<float>()[71], 0.71f);
  const Node& leaky = back.node(*back.find_node("leaky_node"));
  EXPECT_EQ(leaky.attributes.get_float("alpha"), 0.5f);
  EXPECT_EQ(leaky.attributes.get_tensor("table").int_at(2), 3);
  EXPECT_EQ(back.node(*back.find_node("clip_node")).inputs[1], kNoValue);
}

TEST(ExporterTest, LargeConstantsCanBeLeftOutAsTypedInputs) {
  onnx::ModelProto model = export_onnx(sample_graph(), {.max_initializer_elements = 16});
  const onnx::GraphProto& graph = model.graph();
  ASSERT_EQ(graph.initializer_size(), 1);
  EXPECT_EQ(graph.initializer(0).name(), "max");
  ASSERT_EQ(graph.input_size(), 2);
  EXPECT_EQ(graph.input(1).name(), "w");
  EXPECT_EQ(graph.input(1).type().tensor_type().shape().dim(0).dim_value(), 4);
}

TEST(ExporterTest, UnknownDimensionsAndRanksAreLeftOpen) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  ValueId partial = g.add_value("partial", f32({kUnknownDim, 2}));
  ValueId unknown = g.add_value("unknown", unknown_type());
  g.add_node("Foo", {x}, {partial});
  g.add_node("Bar", {partial}, {unknown});
  g.add_output(unknown);
  onnx::ModelProto model = export_onnx(g);
  const auto& info = model.graph().value_info(0).type().tensor_type();
  ASSERT_EQ(info.shape().dim_size(), 2);
  EXPECT_FALSE(info.shape().dim(0).has_dim_value());
  EXPECT_EQ(info.shape().dim(1).dim_value(), 2);
  EXPECT_FALSE(model.graph().output(0).type().tensor_type().has_shape());
}

// A branch of one op over its one captured input, named `inner`.
Subgraph unary_branch(const std::string& op, const std::string& inner) {
  auto body = std::make_shared<Graph>();
  body->opset = 13;
  ValueId in = body->add_input(inner, f32({3}));
  ValueId out = body->add_value(op + "_out", f32({3}));
  body->add_node(op, {in}, {out});
  body->add_output(out);
  body->captured = 1;
  return body;
}

// A captured value leaves the node's inputs in ONNX and is read by its
// outer name inside the body, through an Identity where the body calls it
// something else; the model imports back and computes the same.
TEST(ExporterTest, ABodyReadsItsCapturedValuesByTheirOuterNames) {
  Graph g;
  g.opset = 13;
  ValueId cond = g.add_input("cond", TensorType{DType::kBool, {}});
  ValueId x = g.add_input("x", f32({3}));
  ValueId y = g.add_value("y", f32({3}));
  Attributes branches;
  branches.set("then_branch", unary_branch("Relu", "x"));
  branches.set("else_branch", unary_branch("Neg", "renamed_x"));
  g.add_node("If", {cond, x}, {y}, branches, "choice");
  g.add_output(y);

  onnx::ModelProto model = export_onnx(g);
  const onnx::NodeProto& exported = model.graph().node(0);
  ASSERT_EQ(exported.input_size(), 1);
  for (const auto& attribute : exported.attribute()) {
    EXPECT_EQ(attribute.g().input_size(), 0);
    const bool renamed = attribute.name() == "else_branch";
    ASSERT_EQ(attribute.g().node_size(), renamed ? 2 : 1);
    if (renamed) {
      EXPECT_EQ(attribute.g().node(0).op_type(), "Identity");
      EXPECT_EQ(attribute.g().node(0).input(0), "x");
    }
  }

  TempDir dir;
  save_onnx(g, dir.file("if.onnx"));
  Graph back = import_onnx(dir.file("if.onnx"));
  Tensor input = Tensor::from_vector<float>({-1.0f, 0.5f, 2.0f}, {3});
  for (bool flag : {true, false}) {
    Tensor condition = Tensor::zeros(TensorType{DType::kBool, {}});
    *condition.data<bool>() = flag;
    for (const Graph* graph : {&g, &back}) {
      std::vector<Tensor> outputs = testing::run_reference(*graph, {condition, input});
      const float* values = outputs[0].data<float>();
      EXPECT_FLOAT_EQ(values[0], flag ? 0.0f : 1.0f);
      EXPECT_FLOAT_EQ(values[2], flag ? 2.0f : -2.0f);
    }
  }
}

}  // namespace
}  // namespace collage
