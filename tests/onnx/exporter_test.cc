#include "collage/onnx/exporter.h"

#include <gtest/gtest.h>

#include "collage/ir/passes/partial_type.h"
#include "collage/ir/structural_hash.h"
#include "collage/onnx/importer.h"
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

}  // namespace
}  // namespace collage
