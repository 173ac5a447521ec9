#include "collage/onnx/opset_conversion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "collage/backends/native/native_backend.h"
#include "collage/ir/error.h"
#include "collage/onnx/importer.h"
#include "onnx/error_text.h"
#include "onnx/model_builder.h"
#include "onnx/reference_run.h"

namespace collage {
namespace {

using testing::attr;
using testing::contains;
using testing::error_of;
using testing::floats;
using testing::import_with_native;
using testing::int64s;
using testing::iota;
using testing::ModelBuilder;
using testing::only_node;
using testing::run_reference;

Tensor f32s(std::vector<float> values, Shape shape) {
  return Tensor::from_vector<float>(values, std::move(shape));
}

::testing::AssertionResult near(const std::vector<float>& actual,
                                const std::vector<float>& expected) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << actual.size() << " values, expected " << expected.size();
  }
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (!(std::abs(actual[i] - expected[i]) <= 1e-5f * std::max(1.0f, std::abs(expected[i])))) {
      return ::testing::AssertionFailure()
             << "value " << i << ": " << actual[i] << ", expected " << expected[i];
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(OpsetConversionTest, TheGraphIsConvertedToOpset17AndKeepsTheModelsOpset) {
  ModelBuilder m(18);
  m.input("x", {2}).node("Relu", {"x"}, {"y"}).output("y");
  Graph g = import_with_native(m);
  EXPECT_EQ(g.opset, 17);
  EXPECT_EQ(g.source_opset, 18);
}

TEST(OpsetConversionTest, AGraphOfOpset17IsNotConverted) {
  ModelBuilder m(17);
  m.input("x", {2}).node("Relu", {"x"}, {"y"}).output("y");
  Graph g = import_with_native(m);
  EXPECT_EQ(g.opset, 17);
  EXPECT_EQ(g.source_opset, 0);
}

TEST(OpsetConversionTest, ReductionsTakeTheirAxesInputAsAnAttribute) {
  struct Case {
    std::string op;
    std::vector<float> expected;
  };
  const float e = std::exp(1.0f);
  // Rows [1, 2, 3] and [4, 5, 6], reduced along axis 1.
  const std::vector<Case> cases = {
      {"ReduceMean", {2, 5}},
      {"ReduceMax", {3, 6}},
      {"ReduceMin", {1, 4}},
      {"ReduceProd", {6, 120}},
      {"ReduceSum", {6, 15}},
      {"ReduceSumSquare", {14, 77}},
      {"ReduceLogSum", {std::log(6.0f), std::log(15.0f)}},
      {"ReduceLogSumExp",
       {std::log(e + e * e + e * e * e),
        std::log(std::pow(e, 4.0f) + std::pow(e, 5.0f) + std::pow(e, 6.0f))}},
      {"ReduceL1", {6, 15}},
      {"ReduceL2", {std::sqrt(14.0f), std::sqrt(77.0f)}},
  };
  const Tensor x = f32s({1, 2, 3, 4, 5, 6}, {2, 3});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    ModelBuilder m(18);
    m.input("x", {2, 3})
        .node("Constant", {}, {"axes"}, {attr("value", int64s({1}))})
        .node(c.op, {"x", "axes"}, {"y"}, {attr("keepdims", std::int64_t{0})})
        .output("y");
    Graph g = import_with_native(m);
    const Node& reduce = only_node(g, c.op);
    EXPECT_EQ(g.type(g.outputs()[0]).shape, (Shape{2}));
    // ReduceSum has taken axes as an input since opset 13.
    if (c.op != "ReduceSum") {
      EXPECT_EQ(reduce.inputs.size(), 1u);
      EXPECT_EQ(reduce.attributes.get_ints("axes"), (std::vector<std::int64_t>{1}));
    }
    if (!native_evaluator().can_evaluate(g, reduce)) continue;
    EXPECT_TRUE(near(floats(run_reference(g, {x})[0]), c.expected));
  }
}

TEST(OpsetConversionTest, AReductionWithoutAxesReducesEverything) {
  ModelBuilder m(18);
  m.input("x", {2, 3})
      .node("ReduceMean", {"x"}, {"y"}, {attr("keepdims", std::int64_t{0})})
      .output("y");
  Graph g = import_with_native(m);
  EXPECT_TRUE(near(floats(run_reference(g, {iota({2, 3})})[0]), {2.5f}));
}

TEST(OpsetConversionTest, AReductionWithNoopForEmptyAxesAndNoAxesIsTheIdentity) {
  ModelBuilder m(18);
  m.input("x", {2, 3})
      .initializer("no_axes", Tensor::from_vector<std::int64_t>({}, {0}))
      .node("ReduceMax", {"x", "no_axes"}, {"m"}, {attr("noop_with_empty_axes", std::int64_t{1})})
      .node("Relu", {"m"}, {"y"})
      .output("y");
  Graph g = import_with_native(m);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.type(g.outputs()[0]).shape, (Shape{2, 3}));
  EXPECT_TRUE(near(floats(run_reference(g, {iota({2, 3})})[0]), {0, 1, 2, 3, 4, 5}));
}

TEST(OpsetConversionTest, AReductionWhoseAxesAreComputedIsRefusedNamingTheNode) {
  ModelBuilder m(18);
  m.input("x", {2, 3})
      .input("axes", {1}, onnx::TensorProto::INT64)
      .node("ReduceMean", {"x", "axes"}, {"y"}, {}, "")
      .output("y");
  m.graph().mutable_node(0)->set_name("mean");
  std::string message = error_of([&] { import_with_native(m); });
  EXPECT_TRUE(contains(message, "mean")) << message;
  EXPECT_TRUE(contains(message, "axes input is not a constant")) << message;
}

TEST(OpsetConversionTest, SplitIntoNumOutputsPartsMakesTheLastPartSmaller) {
  ModelBuilder m(18);
  m.input("x", {7})
      .node("Split", {"x"}, {"a", "b", "c"}, {attr("num_outputs", std::int64_t{3})})
      .output("a")
      .output("b")
      .output("c");
  Graph g = import_with_native(m);
  EXPECT_EQ(g.type(g.outputs()[0]).shape, (Shape{3}));
  EXPECT_EQ(g.type(g.outputs()[2]).shape, (Shape{1}));
  std::vector<Tensor> parts = run_reference(g, {iota({7})});
  EXPECT_EQ(floats(parts[0]), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(floats(parts[1]), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(floats(parts[2]), (std::vector<float>{6}));
}

TEST(OpsetConversionTest, SplitIntoNumOutputsEqualPartsAlongANegativeAxis) {
  ModelBuilder m(18);
  m.input("x", {2, 6})
      .node("Split", {"x"}, {"a", "b", "c"},
            {attr("num_outputs", std::int64_t{3}), attr("axis", std::int64_t{-1})})
      .output("a")
      .output("b")
      .output("c");
  Graph g = import_with_native(m);
  std::vector<Tensor> parts = run_reference(g, {iota({2, 6})});
  EXPECT_EQ(parts[1].shape(), (Shape{2, 2}));
  EXPECT_EQ(floats(parts[1]), (std::vector<float>{2, 3, 8, 9}));
}

TEST(OpsetConversionTest, PadsForSomeAxesBecomePadsForEveryAxis) {
  ModelBuilder m(18);
  m.input("x", {2, 3})
      .node("Constant", {}, {"pads"}, {attr("value", int64s({1, 2}))})
      .node("Constant", {}, {"value"}, {attr("value", f32s({9}, {}))})
      .node("Constant", {}, {"axes"}, {attr("value", int64s({-1}))})
      .node("Pad", {"x", "pads", "value", "axes"}, {"y"})
      .output("y");
  Graph g = import_with_native(m);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Value& pads = g.value(g.node(0).inputs[1]);
  ASSERT_TRUE(pads.is_constant());
  EXPECT_EQ(g.type(g.outputs()[0]).shape, (Shape{2, 6}));
  EXPECT_EQ(floats(run_reference(g, {iota({2, 3})})[0]),
            (std::vector<float>{9, 0, 1, 2, 9, 9, 9, 3, 4, 5, 9, 9}));
}

TEST(OpsetConversionTest, PadsWrapModeIsRefused) {
  ModelBuilder m(19);
  m.input("x", {2, 3})
      .initializer("pads", int64s({0, 1, 0, 1}))
      .node("Pad", {"x", "pads"}, {"y"}, {attr("mode", "wrap")})
      .output("y");
  std::string message = error_of([&] { import_with_native(m); });
  EXPECT_TRUE(contains(message, "Pad of opset 19 has no opset-17 form: mode 'wrap'")) << message;
}

TEST(OpsetConversionTest, ResizeScalesForSomeAxesBecomeScalesForEveryAxis) {
  ModelBuilder m(18);
  m.input("x", {1, 1, 2, 2})
      .initializer("scales", f32s({2, 2}, {2}))
      .node("Resize", {"x", "", "scales"}, {"y"},
            {attr("mode", "nearest"), attr("coordinate_transformation_mode", "asymmetric"),
             attr("nearest_mode", "floor"), attr("axes", std::vector<std::int64_t>{2, 3}),
             attr("antialias", std::int64_t{0})})
      .output("y");
  Graph g = import_with_native(m);
  EXPECT_EQ(g.type(g.outputs()[0]).shape, (Shape{1, 1, 4, 4}));
  EXPECT_EQ(floats(run_reference(g, {iota({1, 1, 2, 2})})[0]),
            (std::vector<float>{0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3}));
}

TEST(OpsetConversionTest, ResizeSizesForSomeAxesBecomeSizesForEveryAxis) {
  ModelBuilder m(19);
  m.input("x", {1, 1, 2, 2})
      .initializer("sizes", int64s({4}))
      .node("Resize", {"x", "", "", "sizes"}, {"y"},
            {attr("mode", "nearest"), attr("coordinate_transformation_mode", "asymmetric"),
             attr("nearest_mode", "floor"), attr("axes", std::vector<std::int64_t>{-1})})
      .output("y");
  Graph g = import_with_native(m);
  EXPECT_EQ(g.type(g.outputs()[0]).shape, (Shape{1, 1, 2, 4}));
  EXPECT_EQ(floats(run_reference(g, {iota({1, 1, 2, 2})})[0]),
            (std::vector<float>{0, 0, 1, 1, 2, 2, 3, 3}));
}

TEST(OpsetConversionTest, AntialiasedResizeIsRefusedNamingTheNode) {
  ModelBuilder m(18);
  m.input("x", {1, 1, 4, 4})
      .initializer("scales", f32s({1, 1, 0.5f, 0.5f}, {4}))
      .node("Resize", {"x", "", "scales"}, {"y"},
            {attr("mode", "linear"), attr("antialias", std::int64_t{1})})
      .output("y");
  m.graph().mutable_node(0)->set_name("shrink");
  std::string message = error_of([&] { import_with_native(m); });
  EXPECT_TRUE(contains(message, "shrink")) << message;
  EXPECT_TRUE(contains(message, "Resize of opset 18 has no opset-17 form: antialias=1")) << message;
}

// Opset 18's max and min reductions have no opset-17 schema, but shape
// inference only reads the data's type, and the native kernels run them.
TEST(OpsetConversionTest, ScatterMaxAndMinReductionsStayAsTheyAre) {
  for (const char* op : {"ScatterElements", "ScatterND"}) {
    for (const char* reduction : {"max", "min"}) {
      SCOPED_TRACE(std::string(op) + " " + reduction);
      const Shape index_shape = std::string(op) == "ScatterND" ? Shape{2, 1} : Shape{2};
      ModelBuilder m(18);
      m.input("x", {4})
          .initializer("indices", Tensor::from_vector<std::int64_t>({1, 3}, index_shape))
          .initializer("updates", f32s({5, -5}, {2}))
          .node(op, {"x", "indices", "updates"}, {"y"}, {attr("reduction", reduction)})
          .output("y");
      Graph g = import_with_native(m);
      const std::vector<float> expected = std::string(reduction) == "max"
                                              ? std::vector<float>{0, 5, 2, 3}
                                              : std::vector<float>{0, 1, 2, -5};
      EXPECT_TRUE(near(floats(run_reference(g, {iota({4})})[0]), expected));
    }
  }
}

// x = 0..7 as [1, 4, 2]: two groups of two channels, each group 4 values.
std::vector<float> group_normalized(const std::vector<float>& scale, const std::vector<float>& bias,
                                    bool per_channel) {
  std::vector<float> out;
  for (int i = 0; i < 8; ++i) {
    const int group = i / 4;
    const float mean = 4.0f * float(group) + 1.5f;
    const float variance = 1.25f;
    const float normalized = (float(i) - mean) / std::sqrt(variance + 1e-5f);
    const int k = per_channel ? i / 2 : group;
    out.push_back(normalized * scale[k] + bias[k]);
  }
  return out;
}

TEST(OpsetConversionTest, GroupNormalization18ScalesEachGroup) {
  ModelBuilder m(18);
  m.input("x", {1, 4, 2})
      .initializer("scale", f32s({1, 2}, {2}))
      .initializer("bias", f32s({0, 1}, {2}))
      .node("GroupNormalization", {"x", "scale", "bias"}, {"y"},
            {attr("num_groups", std::int64_t{2})})
      .output("y");
  Graph g = import_with_native(m);
  EXPECT_EQ(g.type(g.outputs()[0]).shape, (Shape{1, 4, 2}));
  // One node, as the model has it: native runs it in every layout.
  EXPECT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(only_node(g, "GroupNormalization").attributes.get_int("num_groups"), 2);
  EXPECT_TRUE(near(floats(run_reference(g, {iota({1, 4, 2})})[0]),
                   group_normalized({1, 2}, {0, 1}, false)));
}

TEST(OpsetConversionTest, GroupNormalization21ScalesEachChannel) {
  ModelBuilder m(21);
  m.input("x", {1, 4, 2})
      .initializer("scale", f32s({1, 2, 3, 4}, {4}))
      .initializer("bias", f32s({0, 0, 1, 1}, {4}))
      .node("GroupNormalization", {"x", "scale", "bias"}, {"y"},
            {attr("num_groups", std::int64_t{2})})
      .output("y");
  Graph g = import_with_native(m);
  EXPECT_TRUE(near(floats(run_reference(g, {iota({1, 4, 2})})[0]),
                   group_normalized({1, 2, 3, 4}, {0, 0, 1, 1}, true)));
}

TEST(OpsetConversionTest, AveragePoolDilationsOfOneAreDroppedAndOthersRefused) {
  for (std::int64_t dilation : {1, 2}) {
    ModelBuilder m(19);
    m.input("x", {1, 1, 4, 4})
        .node("AveragePool", {"x"}, {"y"},
              {attr("kernel_shape", std::vector<std::int64_t>{2, 2}),
               attr("strides", std::vector<std::int64_t>{2, 2}),
               attr("dilations", std::vector<std::int64_t>{dilation, dilation})})
        .output("y");
    if (dilation == 2) {
      std::string message = error_of([&] { import_with_native(m); });
      EXPECT_TRUE(contains(message, "dilations other than 1")) << message;
      continue;
    }
    Graph g = import_with_native(m);
    EXPECT_TRUE(
        near(floats(run_reference(g, {iota({1, 1, 4, 4})})[0]), {2.5f, 4.5f, 10.5f, 12.5f}));
  }
}

TEST(OpsetConversionTest, OpsWhoseNewOpsetsOnlyAddTypesImportAsBefore) {
  ModelBuilder m(21);
  m.input("x", {2, 3})
      .initializer("axis0", int64s({0}))
      .initializer("target", int64s({3, 2}))
      .node("Unsqueeze", {"x", "axis0"}, {"u"})
      .node("Transpose", {"u"}, {"t"}, {attr("perm", std::vector<std::int64_t>{0, 2, 1})})
      .node("Flatten", {"t"}, {"f"}, {attr("axis", std::int64_t{1})})
      .node("Reshape", {"f", "target"}, {"r"})
      .node("Identity", {"r"}, {"i"})
      .node("Cast", {"i"}, {"c"},
            {attr("to", std::int64_t{onnx::TensorProto::FLOAT}), attr("saturate", std::int64_t{1})})
      .node("Shape", {"c"}, {"s"})
      .node("ConstantOfShape", {"s"}, {"ones"}, {attr("value", f32s({1}, {1}))})
      .node("Add", {"c", "ones"}, {"y"})
      .output("y");
  Graph g = import_with_native(m);
  EXPECT_EQ(g.type(g.outputs()[0]).shape, (Shape{3, 2}));
  // x transposed: [[0, 3], [1, 4], [2, 5]], plus one.
  EXPECT_EQ(floats(run_reference(g, {iota({2, 3})})[0]), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(OpsetConversionTest, Opset7ModelsReadAsOpset9WithUpsampleScalesAsAnAttribute) {
  // The ONNX model zoo's older CNNs: BatchNormalization-7 with its default
  // spatial = 1, Upsample-7 with scales as an attribute.
  ModelBuilder m(7);
  m.input("x", {1, 2, 1, 2})
      .initializer("scale", f32s({1, 2}, {2}))
      .initializer("bias", f32s({0, 1}, {2}))
      .initializer("mean", f32s({0, 0}, {2}))
      .initializer("var", f32s({1, 1}, {2}))
      .node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"b"},
            {attr("epsilon", 0.0f), attr("spatial", std::int64_t{1})})
      .node("Upsample", {"b"}, {"y"},
            {attr("mode", "nearest"), attr("scales", std::vector<float>{1, 1, 1, 2})})
      .output("y");
  Graph g = import_with_native(m);
  EXPECT_EQ(g.opset, 7);
  EXPECT_EQ(g.type(g.outputs()[0]).shape, (Shape{1, 2, 1, 4}));
  // Channel 0: 0, 1 as they are; channel 1: 2, 3 doubled plus one; each twice.
  EXPECT_EQ(floats(run_reference(g, {iota({1, 2, 1, 2})})[0]),
            (std::vector<float>{0, 0, 1, 1, 5, 5, 7, 7}));
}

TEST(OpsetConversionTest, BatchNormalizationPerElementOfOpset7IsRefused) {
  ModelBuilder m(7);
  m.input("x", {1, 2})
      .initializer("p", f32s({1, 1}, {2}))
      .node("BatchNormalization", {"x", "p", "p", "p", "p"}, {"y"},
            {attr("spatial", std::int64_t{0})})
      .output("y");
  std::string message = error_of([&] { import_with_native(m); });
  EXPECT_TRUE(contains(message, "BatchNormalization of opset 7 with spatial = 0")) << message;
}

// Opset 6's Add broadcast by attribute: b along axis 1 of x.
TEST(OpsetConversionTest, Opset6IsConvertedToOpset7ByONNXsVersionConverter) {
  ModelBuilder m(6);
  m.input("x", {2, 3, 2})
      .initializer("b", f32s({10, 20, 30}, {3}))
      .node("Add", {"x", "b"}, {"y"},
            {attr("broadcast", std::int64_t{1}), attr("axis", std::int64_t{1})})
      .output("y");
  Graph g = import_with_native(m);
  EXPECT_EQ(g.opset, 7);
  EXPECT_TRUE(near(floats(run_reference(g, {iota({2, 3, 2})})[0]),
                   {10, 11, 22, 23, 34, 35, 16, 17, 28, 29, 40, 41}));
}

// PRelu's slope was per channel before opset 7 and broadcasts from the
// right after: a slope of C values still lands on the channels.
TEST(OpsetConversionTest, Opset6PReluKeepsItsSlopePerChannel) {
  ModelBuilder m(6);
  m.input("x", {1, 2, 2})
      .initializer("slope", f32s({0.5f, 2}, {2}))
      .node("PRelu", {"x", "slope"}, {"y"})
      .output("y");
  Graph g = import_with_native(m);
  const Tensor x = Tensor::from_vector<float>({-1, -2, -3, -4}, {1, 2, 2});
  EXPECT_TRUE(near(floats(run_reference(g, {x})[0]), {-0.5f, -1, -6, -8}));
}

TEST(OpsetConversionTest, AnOpset6ModelTheConverterCannotReadIsRefusedNamingIt) {
  ModelBuilder m(6);
  m.input("x", {2}).node("NoSuchOp", {"x"}, {"y"}).output("y");
  std::string message = error_of([&] { import_with_native(m); });
  EXPECT_TRUE(contains(message, "opset 6 of the default ONNX domain could not be converted"))
      << message;
}

// ONNX's converter dereferences the producer of every value it reads: an
// output nothing defines crashed it (found by import_fuzzer).
TEST(OpsetConversionTest, AnOldOpsetModelTheConverterWouldCrashOnIsRefusedBeforeConversion) {
  ModelBuilder undefined_output(1);
  undefined_output.input("x", {2, 3}).node("Relu", {"x"}, {"z"}).output("y");
  std::string message = error_of([&] { import_with_native(undefined_output); });
  EXPECT_TRUE(contains(message, "output 'y': is a graph output that nothing defines")) << message;

  ModelBuilder undefined_input(6);
  undefined_input.input("x", {2}).node("Add", {"x", "b"}, {"y"}).output("y");
  message = error_of([&] { import_with_native(undefined_input); });
  EXPECT_TRUE(contains(message, "reads 'b', which nothing defines before it")) << message;

  // An Add with one input crashed the converter's broadcast check (found by
  // graph_passes_fuzzer).
  ModelBuilder one_input_add(1);
  one_input_add.input("a", {2}).node("Add", {"a"}, {"y"}).output("y");
  message = error_of([&] { import_with_native(one_input_add); });
  EXPECT_TRUE(contains(message, "'Add' of opset 1 takes 2 to 2 inputs, not 1")) << message;
}

// ONNX's shape inference of the opset 1-6 sliding-window ops indexes its
// attribute vectors by the kernel's rank without checking it against the
// input's: a kernel of the wrong rank crashed it (found by import_fuzzer and
// graph_passes_fuzzer). Such a model is refused, not crashed on.
TEST(OpsetConversionTest, AnOldOpsetWindowOfTheWrongRankIsRefusedNotCrashedOn) {
  ModelBuilder conv(1);
  conv.input("x", {1, 2, 8})
      .initializer("w", f32s(std::vector<float>(2 * 2 * 3 * 3, 1.0f), {2, 2, 3, 3}))
      .node("Conv", {"x", "w"}, {"y"}, {attr("pads", std::vector<std::int64_t>{1, 1})})
      .output("y");
  std::string message = error_of([&] { import_with_native(conv); });
  EXPECT_TRUE(contains(message, "Conv")) << message;

  ModelBuilder transpose(1);
  transpose.input("x", {1, 2, 8})
      .initializer("w", f32s(std::vector<float>(2 * 2 * 3 * 3, 1.0f), {2, 2, 3, 3}))
      .node("ConvTranspose", {"x", "w"}, {"y"})
      .output("y");
  message = error_of([&] { import_with_native(transpose); });
  EXPECT_TRUE(contains(message, "ConvTranspose")) << message;

  ModelBuilder pool(5);
  pool.input("x", {1, 2, 8})
      .node("MaxPool", {"x"}, {"y"},
            {attr("kernel_shape", std::vector<std::int64_t>{2, 2}),
             attr("strides", std::vector<std::int64_t>{1})})
      .output("y");
  message = error_of([&] { import_with_native(pool); });
  EXPECT_TRUE(contains(message, "MaxPool")) << message;
}

TEST(OpsetConversionTest, GeluStaysAGeluNodeOfItsInputsType) {
  ModelBuilder m(20);
  m.input("x", {2, 3})
      .node("Gelu", {"x"}, {"g"}, {attr("approximate", "tanh")})
      .node("Transpose", {"g"}, {"y"}, {attr("perm", std::vector<std::int64_t>{1, 0})})
      .output("y");
  ImportOptions options;
  Graph g = import_onnx_model(m.shared(), options);
  const Node& gelu = only_node(g, "Gelu");
  EXPECT_EQ(gelu.domain, "");
  EXPECT_EQ(gelu.attributes.get_string("approximate"), "tanh");
  EXPECT_EQ(g.type(gelu.outputs[0]), (TensorType{DType::kFloat32, {2, 3}}));
  EXPECT_EQ(g.type(g.outputs()[0]).shape, (Shape{3, 2}));
}

}  // namespace
}  // namespace collage
