#include "collage/onnx/attribute_checks.h"

#include <gtest/gtest.h>

#include "collage/ir/error.h"
#include "collage/onnx/importer.h"
#include "onnx/error_text.h"
#include "onnx/model_builder.h"

namespace collage {
namespace {

using testing::attr;
using testing::contains;
using testing::ModelBuilder;

std::string import_error(const ModelBuilder& m) {
  try {
    import_onnx_model(m.shared());
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

// x: f32[1,3,8,8] -> Conv(w: f32[4,3,3,3]) with the given attributes.
ModelBuilder conv_model(const std::vector<onnx::AttributeProto>& attributes) {
  ModelBuilder m;
  m.input("x", {1, 3, 8, 8})
      .initializer("w", Tensor::zeros(TensorType{DType::kFloat32, {4, 3, 3, 3}}))
      .node("Conv", {"x", "w"}, {"y"}, attributes)
      .output("y");
  return m;
}

ModelBuilder pool_model(const std::string& op,
                        const std::vector<onnx::AttributeProto>& attributes) {
  ModelBuilder m;
  m.input("x", {1, 3, 8, 8}).node(op, {"x"}, {"y"}, attributes).output("y");
  return m;
}

// ONNX's own shape inference divides by the strides: before the check this
// import died of SIGFPE.
TEST(AttributeChecksTest, AConvWithAZeroStrideIsAnErrorNamingNodeAndAttribute) {
  std::string message =
      import_error(conv_model({attr("strides", std::vector<std::int64_t>{0, 1})}));
  EXPECT_TRUE(contains(message, "node 'Conv_0'")) << message;
  EXPECT_TRUE(contains(message, "attribute 'strides'")) << message;
}

TEST(AttributeChecksTest, EveryPoolWithAZeroStrideIsAnError) {
  for (const char* op : {"MaxPool", "AveragePool", "LpPool"}) {
    std::string message =
        import_error(pool_model(op, {attr("kernel_shape", std::vector<std::int64_t>{2, 2}),
                                     attr("strides", std::vector<std::int64_t>{0, 1})}));
    EXPECT_TRUE(contains(message, "attribute 'strides'")) << op << ": " << message;
  }
}

TEST(AttributeChecksTest, NegativeStridesZeroDilationsAndZeroGroupsAreErrors) {
  EXPECT_TRUE(
      contains(import_error(conv_model({attr("strides", std::vector<std::int64_t>{-1, 1})})),
               "attribute 'strides'"));
  EXPECT_TRUE(
      contains(import_error(conv_model({attr("dilations", std::vector<std::int64_t>{0, 1})})),
               "attribute 'dilations'"));
  EXPECT_TRUE(
      contains(import_error(conv_model({attr("group", std::int64_t{0})})), "attribute 'group'"));
}

TEST(AttributeChecksTest, NegativePadsAndAZeroKernelAreErrors) {
  EXPECT_TRUE(
      contains(import_error(conv_model({attr("pads", std::vector<std::int64_t>{-5, 0, 0, 0})})),
               "attribute 'pads'"));
  EXPECT_TRUE(contains(
      import_error(pool_model("MaxPool", {attr("kernel_shape", std::vector<std::int64_t>{0, 2})})),
      "attribute 'kernel_shape'"));
}

TEST(AttributeChecksTest, PadsOfTheWrongLengthAreAnError) {
  std::string message =
      import_error(pool_model("MaxPool", {attr("kernel_shape", std::vector<std::int64_t>{2, 2}),
                                          attr("pads", std::vector<std::int64_t>{1, 1})}));
  EXPECT_TRUE(contains(message, "has 2 values, expected 4")) << message;
}

TEST(AttributeChecksTest, AZeroBlocksizeIsAnError) {
  ModelBuilder m;
  m.input("x", {1, 4, 2, 2})
      .node("DepthToSpace", {"x"}, {"y"}, {attr("blocksize", std::int64_t{0})})
      .output("y");
  EXPECT_TRUE(contains(import_error(m), "attribute 'blocksize'"));
}

// Found by fuzz/import_fuzzer: ONNX's inference took the spatial rank from
// the weight and indexed the rank-3 input's dimensions past their end
// (SIGSEGV in onnx::convPoolShapeInference).
TEST(AttributeChecksTest, AConvWhoseWeightRankDiffersFromItsInputsIsAnError) {
  ModelBuilder m;
  m.input("x", {1, 3, 8})
      .initializer("w", Tensor::zeros(TensorType{DType::kFloat32, {4, 3, 3, 3}}))
      .node("Conv", {"x", "w"}, {"y"})
      .output("y");
  std::string message = import_error(m);
  EXPECT_TRUE(contains(message, "node 'Conv_0'")) << message;
  EXPECT_TRUE(contains(message, "the weight (input 1) has rank 4")) << message;
}

TEST(AttributeChecksTest, AKernelShapeOfAnotherRankThanTheInputIsAnError) {
  std::string message = import_error(
      pool_model("MaxPool", {attr("kernel_shape", std::vector<std::int64_t>{2, 2, 2})}));
  EXPECT_TRUE(contains(message, "attribute 'kernel_shape'")) << message;
  EXPECT_TRUE(contains(message, "has 3 values, expected 2")) << message;
}

TEST(AttributeChecksTest, AWindowOpOnARankTwoInputIsAnError) {
  ModelBuilder m;
  m.input("x", {3, 8})
      .node("MaxPool", {"x"}, {"y"}, {attr("kernel_shape", std::vector<std::int64_t>{2})})
      .output("y");
  EXPECT_TRUE(contains(import_error(m), "needs at least 3")) << import_error(m);
}

TEST(AttributeChecksTest, AValidConvImports) {
  Graph g = import_onnx_model(conv_model({attr("strides", std::vector<std::int64_t>{2, 2}),
                                          attr("pads", std::vector<std::int64_t>{1, 1, 1, 1})})
                                  .shared());
  EXPECT_EQ(g.type(g.outputs()[0]), (TensorType{DType::kFloat32, {1, 4, 4, 4}}));
}

}  // namespace
}  // namespace collage
