// Parameters of Pad, Slice, Expand, Tile, Resize, ConstantOfShape and Range
// that exporters compute from the input's shape, with arithmetic (Mod,
// ScatterND) on it: with static input shapes they fold into constants at
// import.
#include <gtest/gtest.h>

#include "collage/backends/native/native_backend.h"
#include "collage/onnx/importer.h"
#include "onnx/model_builder.h"
#include "onnx/reference_run.h"

namespace collage {
namespace {

using testing::attr;
using testing::floats;
using testing::import_with_native;
using testing::int64s;
using testing::iota;
using testing::ModelBuilder;
using testing::only_node;
using testing::run_reference;

Tensor scalar(std::int64_t value) { return Tensor::from_vector<std::int64_t>({value}, {}); }

// x: f32[1, 5, 6]; "h" = 5 and "w" = 6, its last two dimensions as int64
// scalars; "h1", "w1" the same as one-element vectors.
ModelBuilder with_dimensions() {
  ModelBuilder m;
  m.input("x", {1, 5, 6})
      .initializer("zero", scalar(0))
      .initializer("one", scalar(1))
      .initializer("two", scalar(2))
      .initializer("three", scalar(3))
      .initializer("four", scalar(4))
      .initializer("axis0", int64s({0}))
      .node("Shape", {"x"}, {"shape"})
      .node("Gather", {"shape", "one"}, {"h"}, {attr("axis", std::int64_t{0})})
      .node("Gather", {"shape", "two"}, {"w"}, {attr("axis", std::int64_t{0})})
      .node("Unsqueeze", {"h", "axis0"}, {"h1"})
      .node("Unsqueeze", {"w", "axis0"}, {"w1"});
  return m;
}

TEST(ShapeParametersTest, PadsThatRoundUpToAWindowFoldFromTheInputShape) {
  // PyTorch's window partition: pad H and W to multiples of 4 with
  // (4 - H % 4) % 4 at the end.
  ModelBuilder m = with_dimensions();
  m.initializer("no_pads", int64s({0, 0, 0, 0}))
      .node("Mod", {"h", "four"}, {"h_rest"})
      .node("Sub", {"four", "h_rest"}, {"h_short"})
      .node("Mod", {"h_short", "four"}, {"h_pad"})
      .node("Mod", {"w", "four"}, {"w_rest"})
      .node("Sub", {"four", "w_rest"}, {"w_short"})
      .node("Mod", {"w_short", "four"}, {"w_pad"})
      .node("Unsqueeze", {"h_pad", "axis0"}, {"h_pad1"})
      .node("Unsqueeze", {"w_pad", "axis0"}, {"w_pad1"})
      .node("Concat", {"no_pads", "h_pad1", "w_pad1"}, {"pads"}, {attr("axis", std::int64_t{0})})
      .node("Pad", {"x", "pads"}, {"y"})
      .output("y");
  Graph g = import_with_native(m);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Value& pads = g.value(only_node(g, "Pad").inputs[1]);
  ASSERT_TRUE(pads.is_constant());
  EXPECT_EQ(pads.constant->int_at(4), 3);
  EXPECT_EQ(pads.constant->int_at(5), 2);
  ASSERT_EQ(g.type(g.outputs()[0]).shape, (Shape{1, 8, 8}));
  std::vector<float> y = floats(run_reference(g, {iota({1, 5, 6})})[0]);
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      const float expected = i < 5 && j < 6 ? float(i * 6 + j) : 0.0f;
      EXPECT_EQ(y[i * 8 + j], expected) << i << "," << j;
    }
  }
}

TEST(ShapeParametersTest, SliceEndsFoldFromTheInputShape) {
  // x[:, :, :w - w % 4]
  ModelBuilder m = with_dimensions();
  m.initializer("axis2", int64s({2}))
      .node("Mod", {"w1", "four"}, {"w_rest"})
      .node("Sub", {"w1", "w_rest"}, {"end"})
      .node("Slice", {"x", "axis0", "end", "axis2"}, {"y"})
      .output("y");
  Graph g = import_with_native(m);
  ASSERT_EQ(g.num_nodes(), 1u);
  ASSERT_EQ(g.type(g.outputs()[0]).shape, (Shape{1, 5, 4}));
  std::vector<float> y = floats(run_reference(g, {iota({1, 5, 6})})[0]);
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 4; ++j) EXPECT_EQ(y[i * 4 + j], float(i * 6 + j));
  }
}

TEST(ShapeParametersTest, AnExpandShapeFoldsFromTheInputShape) {
  // Expand to [h % 3, h, w] = [2, 5, 6].
  ModelBuilder m = with_dimensions();
  m.node("Mod", {"h1", "three"}, {"copies"})
      .node("Concat", {"copies", "h1", "w1"}, {"target"}, {attr("axis", std::int64_t{0})})
      .node("Expand", {"x", "target"}, {"y"})
      .output("y");
  Graph g = import_with_native(m);
  ASSERT_EQ(g.num_nodes(), 1u);
  ASSERT_EQ(g.type(g.outputs()[0]).shape, (Shape{2, 5, 6}));
  std::vector<float> y = floats(run_reference(g, {iota({1, 5, 6})})[0]);
  for (int i = 0; i < 30; ++i) {
    EXPECT_EQ(y[i], float(i));
    EXPECT_EQ(y[30 + i], float(i));
  }
}

TEST(ShapeParametersTest, TileRepeatsFoldFromTheInputShape) {
  // Tile by [w % 4, 1, 1] = [2, 1, 1].
  ModelBuilder m = with_dimensions();
  m.initializer("ones", int64s({1, 1}))
      .node("Mod", {"w1", "four"}, {"copies"})
      .node("Concat", {"copies", "ones"}, {"repeats"}, {attr("axis", std::int64_t{0})})
      .node("Tile", {"x", "repeats"}, {"y"})
      .output("y");
  Graph g = import_with_native(m);
  ASSERT_EQ(g.num_nodes(), 1u);
  ASSERT_EQ(g.type(g.outputs()[0]).shape, (Shape{2, 5, 6}));
  std::vector<float> y = floats(run_reference(g, {iota({1, 5, 6})})[0]);
  for (int i = 0; i < 30; ++i) EXPECT_EQ(y[30 + i], float(i));
}

TEST(ShapeParametersTest, ResizeSizesFoldFromTheInputShape) {
  // Nearest resize of [1, 1, 5, 6] to [1, 1, h * (h % 2 + 1), w] = [1, 1, 10, 6].
  ModelBuilder m = with_dimensions();
  m.initializer("batch_channel", int64s({1, 1}))
      .node("Unsqueeze", {"x", "axis0"}, {"image"})
      .node("Mod", {"h1", "two"}, {"odd"})
      .node("Add", {"odd", "one"}, {"factor"})
      .node("Mul", {"h1", "factor"}, {"height"})
      .node("Concat", {"batch_channel", "height", "w1"}, {"sizes"}, {attr("axis", std::int64_t{0})})
      .node("Resize", {"image", "", "", "sizes"}, {"y"},
            {attr("mode", "nearest"), attr("coordinate_transformation_mode", "asymmetric"),
             attr("nearest_mode", "floor")})
      .output("y");
  Graph g = import_with_native(m);
  const Value& sizes = g.value(only_node(g, "Resize").inputs[3]);
  ASSERT_TRUE(sizes.is_constant());
  ASSERT_EQ(g.type(g.outputs()[0]).shape, (Shape{1, 1, 10, 6}));
  std::vector<float> y = floats(run_reference(g, {iota({1, 5, 6})})[0]);
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 6; ++j) EXPECT_EQ(y[i * 6 + j], float(i / 2 * 6 + j));
  }
}

TEST(ShapeParametersTest, AConstantOfShapeShapeFoldsFromTheInputShape) {
  // 1.5 in the shape [h % 3, w] = [2, 6], a graph output computed at run time.
  ModelBuilder m = with_dimensions();
  m.node("Mod", {"h1", "three"}, {"rows"})
      .node("Concat", {"rows", "w1"}, {"c_shape"}, {attr("axis", std::int64_t{0})})
      .node("ConstantOfShape", {"c_shape"}, {"y"},
            {attr("value", Tensor::from_vector<float>({1.5f}, {1}))})
      .output("y");
  Graph g = import_with_native(m);
  ASSERT_EQ(g.num_nodes(), 1u);
  ASSERT_EQ(g.type(g.outputs()[0]).shape, (Shape{2, 6}));
  EXPECT_EQ(floats(run_reference(g, {iota({1, 5, 6})})[0]), std::vector<float>(12, 1.5f));
}

TEST(ShapeParametersTest, ARangeLimitFoldsFromTheInputShape) {
  // Range(0, w % 4 + 3) = [0, 1, 2, 3, 4], added to the last row of x.
  ModelBuilder m = with_dimensions();
  m.initializer("last_row", int64s({4}))
      .initializer("row_end", int64s({5}))
      .initializer("axis1", int64s({1}))
      .node("Mod", {"w", "four"}, {"w_rest"})
      .node("Add", {"w_rest", "three"}, {"limit"})
      .node("Range", {"zero", "limit", "one"}, {"steps"})
      .node("Cast", {"steps"}, {"offsets"}, {attr("to", std::int64_t{onnx::TensorProto::FLOAT})})
      .node("Slice", {"x", "last_row", "row_end", "axis1"}, {"row"})
      .node("Transpose", {"row"}, {"column"}, {attr("perm", std::vector<std::int64_t>{0, 2, 1})})
      .node("Slice", {"column", "axis0", "row_end", "axis1"}, {"head"})
      .node("Squeeze", {"head"}, {"values"})
      .node("Add", {"values", "offsets"}, {"y"})
      .output("y");
  Graph g = import_with_native(m);
  ASSERT_TRUE(g.value(only_node(g, "Add").inputs[1]).is_constant());
  ASSERT_EQ(g.type(g.outputs()[0]).shape, (Shape{5}));
  // x's last row is 24..29; its first five plus 0..4.
  EXPECT_EQ(floats(run_reference(g, {iota({1, 5, 6})})[0]),
            (std::vector<float>{24, 26, 28, 30, 32}));
}

TEST(ShapeParametersTest, AMaskBuiltBySliceAssignmentFolds) {
  // mask = zeros like x; mask[0, h - 1] = 1 (ScatterND); y = x + mask.
  ModelBuilder m = with_dimensions();
  m.initializer("row_ones", Tensor::from_vector<float>(std::vector<float>(6, 1.0f), {1, 6}))
      .node("ConstantOfShape", {"shape"}, {"zeros"},
            {attr("value", Tensor::from_vector<float>({0.0f}, {1}))})
      .node("Sub", {"h1", "one"}, {"last"})
      .node("Concat", {"axis0", "last"}, {"index"}, {attr("axis", std::int64_t{0})})
      .node("Unsqueeze", {"index", "axis0"}, {"indices"})
      .node("ScatterND", {"zeros", "indices", "row_ones"}, {"mask"})
      .node("Add", {"x", "mask"}, {"y"})
      .output("y");
  Graph g = import_with_native(m);
  ASSERT_EQ(g.num_nodes(), 1u);
  std::vector<float> y = floats(run_reference(g, {iota({1, 5, 6})})[0]);
  for (int i = 0; i < 30; ++i) EXPECT_EQ(y[i], float(i) + (i >= 24 ? 1.0f : 0.0f)) << i;
}

}  // namespace
}  // namespace collage
