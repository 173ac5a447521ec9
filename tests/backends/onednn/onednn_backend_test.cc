#include "collage/backends/onednn/onednn_backend.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <dnnl.hpp>

#include "backends/onednn/onednn_test_util.h"
#include "collage/ir/error.h"

namespace collage::onednn_test {
namespace {

const NamedPattern* find_pattern(const std::vector<NamedPattern>& patterns,
                                 const std::string& name) {
  for (const NamedPattern& pattern : patterns) {
    if (pattern.name == name) return &pattern;
  }
  return nullptr;
}

TEST(OnednnBackendTest, IsALibraryNamedOnednnWithTheRealVersion) {
  const Backend& backend = onednn_backend();
  EXPECT_EQ(backend.name(), "onednn");
  EXPECT_EQ(backend.style(), BackendStyle::kLibrary);
  const dnnl_version_t* v = dnnl_version();
  EXPECT_EQ(backend.version(), "oneDNN " + std::to_string(v->major) + "." +
                                   std::to_string(v->minor) + "." + std::to_string(v->patch));
}

TEST(OnednnBackendTest, DescribesItsOpsAndPatterns) {
  const std::string text = onednn_backend().describe_support();
  EXPECT_NE(text.find("Conv"), std::string::npos);
  EXPECT_NE(text.find("onednn.matmul_bias_add_activation"), std::string::npos);
}

TEST(OnednnBackendTest, DoesNotClaimOpsWithoutAPrimitive) {
  GraphBuilder b;
  ValueId x = b.input({2, 3});
  b.output(b.node("Erf", {x}, {2, 3}));
  b.output(b.node("Gather", {x, b.weights({1})}, {1, 3}));
  EXPECT_FALSE(onednn_backend().supports(b.graph(), b.graph().node(0)));
  EXPECT_FALSE(onednn_backend().supports(b.graph(), b.graph().node(1)));
}

TEST(OnednnBackendTest, DoesNotClaimCustomDomainOps) {
  GraphBuilder b;
  b.output(b.node("Relu", {b.input({2, 3})}, {2, 3}));
  b.graph().node(0).domain = "com.example";
  EXPECT_FALSE(onednn_backend().supports(b.graph(), b.graph().node(0)));
}

TEST(OnednnBackendTest, ConvBiasReluPatternMatchesTheWholeChain) {
  GraphBuilder b;
  ValueId conv = b.node("Conv", {b.input({1, 4, 5, 5}), b.weights({8, 4, 3, 3})}, {1, 8, 3, 3});
  ValueId biased = b.node("Add", {conv, b.weights({1, 8, 1, 1})}, {1, 8, 3, 3});
  b.output(b.node("Relu", {biased}, {1, 8, 3, 3}));
  const auto patterns = onednn_backend().patterns();
  const NamedPattern* entry = find_pattern(patterns, "onednn.conv_bias_add_activation");
  ASSERT_NE(entry, nullptr);
  auto matched = match(entry->pattern, b.graph(), 2);
  ASSERT_TRUE(matched.has_value());
  EXPECT_EQ(*matched, (std::vector<NodeId>{0, 1, 2}));
  // Rooted at the Add, the prefix conv+bias is a candidate of its own.
  EXPECT_EQ(match(entry->pattern, b.graph(), 1), (std::vector<NodeId>{0, 1}));
}

TEST(OnednnBackendTest, ConvResidualAddPatternAcceptsAnyOtherOperand) {
  GraphBuilder b;
  ValueId x = b.input({1, 4, 3, 3});
  ValueId conv = b.node("Conv", {x, b.weights({4, 4, 1, 1})}, {1, 4, 3, 3});
  ValueId sum = b.node("Add", {x, conv}, {1, 4, 3, 3});
  b.output(b.node("Relu", {sum}, {1, 4, 3, 3}));
  const auto patterns = onednn_backend().patterns();
  const NamedPattern* entry = find_pattern(patterns, "onednn.conv_bias_add_activation");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(match(entry->pattern, b.graph(), 2), (std::vector<NodeId>{0, 1, 2}));
}

TEST(OnednnBackendTest, MatMulGeluPatternCoversTheErfNodes) {
  GraphBuilder b;
  const Shape s = {4, 8};
  ValueId mm = b.node("MatMul", {b.input({4, 6}), b.weights({6, 8})}, s);
  ValueId biased = b.node("Add", {mm, b.weights({8})}, s);
  ValueId scaled = b.node("Div", {biased, b.constant(scalar(float(std::sqrt(2.0))))}, s);
  ValueId erf = b.node("Erf", {scaled}, s);
  ValueId plus_one = b.node("Add", {erf, b.constant(scalar(1.f))}, s);
  ValueId product = b.node("Mul", {biased, plus_one}, s);
  b.output(b.node("Mul", {product, b.constant(scalar(0.5f))}, s));
  const auto patterns = onednn_backend().patterns();
  const NamedPattern* entry = find_pattern(patterns, "onednn.matmul_bias_add_activation");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(match(entry->pattern, b.graph(), 6), (std::vector<NodeId>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(matches_reference(b.graph()));
}

TEST(OnednnBackendTest, MatMulPatternCoversABiasAndASingleGeluOrSwishNode) {
  for (const char* activation : {"Gelu", "Swish"}) {
    SCOPED_TRACE(activation);
    GraphBuilder b;
    ValueId mm = b.node("MatMul", {b.input({4, 6}), b.weights({6, 8})}, {4, 8});
    ValueId biased = b.node("Add", {mm, b.weights({8})}, {4, 8});
    b.output(b.node(activation, {biased}, {4, 8}));
    const auto patterns = onednn_backend().patterns();
    const NamedPattern* entry = find_pattern(patterns, "onednn.matmul_bias_add_activation");
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(match(entry->pattern, b.graph(), 2), (std::vector<NodeId>{0, 1, 2}));
  }
}

TEST(OnednnBackendTest, BinaryActivationPatternRejectsUnsupportedBroadcasts) {
  GraphBuilder b;
  ValueId sum = b.node("Sub", {b.input({5}), b.input({4, 5})}, {4, 5});
  b.output(b.node("Relu", {sum}, {4, 5}));
  const auto patterns = onednn_backend().patterns();
  const NamedPattern* entry = find_pattern(patterns, "onednn.binary_activation");
  ASSERT_NE(entry, nullptr);
  EXPECT_FALSE(match(entry->pattern, b.graph(), 1).has_value());
}

TEST(OnednnBackendTest, APartitionWithAnUnsupportedNodeIsAFailure) {
  GraphBuilder b;
  ValueId relu = b.node("Relu", {b.input({2, 3})}, {2, 3});
  b.output(b.node("Erf", {relu}, {2, 3}));
  const std::string reason = compile_failure(b.graph());
  EXPECT_NE(reason.find("Erf"), std::string::npos) << reason;
}

TEST(OnednnBackendTest, APartitionWhoseOutputIsAnInputIsAFailure) {
  GraphBuilder b;
  ValueId x = b.input({2, 3});
  b.output(b.node("Relu", {x}, {2, 3}));
  b.output(x);
  EXPECT_NE(compile_failure(b.graph()), "");
}

TEST(OnednnBackendTest, AMalformedNodeIsAFailureNotACrash) {
  GraphBuilder b;
  // Weights whose channels do not match the input.
  b.output(b.node("Conv", {b.input({1, 3, 5, 5}), b.weights({4, 2, 3, 3})}, {1, 4, 3, 3}));
  EXPECT_NE(compile_failure(b.graph()), "");
}

TEST(OnednnBackendTest, AnAttributeOfTheWrongKindIsUnsupportedNotACrash) {
  GraphBuilder b;
  b.output(b.node("LeakyRelu", {b.input({2, 3})}, {2, 3}, attrs({{"alpha", std::string("x")}})));
  EXPECT_FALSE(onednn_backend().supports(b.graph(), b.graph().node(0)));
  EXPECT_NE(compile_failure(b.graph()).find("alpha"), std::string::npos);
}

TEST(OnednnBackendTest, KernelRejectsTensorsOfTheWrongType) {
  GraphBuilder b;
  b.output(b.node("Relu", {b.input({2, 3})}, {2, 3}));
  auto kernel = onednn_backend().compile(b.graph(), CompileOptions{1});
  ASSERT_TRUE(kernel.ok());
  std::vector<Tensor> inputs = {random_tensor({3, 2}, 1)};
  std::vector<Tensor> outputs = {Tensor::zeros(f32({2, 3}))};
  EXPECT_THROW(kernel.value()->run(inputs, outputs), Error);
  EXPECT_THROW(kernel.value()->run({}, outputs), Error);
}

TEST(OnednnBackendTest, KernelRunsRepeatedlyWithoutTouchingItsInputs) {
  GraphBuilder b;
  ValueId x = b.input({1, 8, 5, 5});
  ValueId conv = b.node("Conv", {x, b.weights({8, 8, 3, 3})}, {1, 8, 5, 5},
                        attrs({{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}}));
  b.output(b.node("Add", {conv, x}, {1, 8, 5, 5}));
  auto kernel = onednn_backend().compile(b.graph(), CompileOptions{1});
  ASSERT_TRUE(kernel.ok());
  const std::vector<Tensor> inputs = random_inputs(b.graph(), 11);
  const Tensor original = inputs[0].clone();
  const std::vector<Tensor> first = run(*kernel.value(), b.graph(), inputs);
  const std::vector<Tensor> second = run(*kernel.value(), b.graph(), inputs);
  EXPECT_TRUE(all_close(inputs[0], original, 0.0));
  EXPECT_TRUE(all_close(second[0], first[0], 0.0));
  EXPECT_TRUE(all_close(first[0], run_reference(b.graph(), inputs)[0]));
}

TEST(OnednnBackendTest, KernelUsesItsThreadCountAndRestoresTheCallers) {
  GraphBuilder b;
  ValueId mm = b.node("MatMul", {b.input({64, 96}), b.weights({96, 80})}, {64, 80});
  b.output(b.node("Relu", {mm}, {64, 80}));
  omp_set_num_threads(1);
  auto kernel = onednn_backend().compile(b.graph(), CompileOptions{2});
  ASSERT_TRUE(kernel.ok());
  EXPECT_EQ(omp_get_max_threads(), 1);
  const std::vector<Tensor> inputs = random_inputs(b.graph(), 5);
  const std::vector<Tensor> outputs = run(*kernel.value(), b.graph(), inputs);
  EXPECT_EQ(omp_get_max_threads(), 1);
  EXPECT_TRUE(all_close(outputs[0], run_reference(b.graph(), inputs)[0]));
}

}  // namespace
}  // namespace collage::onednn_test
