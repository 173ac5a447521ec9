#include "collage/plan/plan_report.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "collage/backends/registry.h"
#include "plan/sample_plan.h"

namespace collage {
namespace {

using testing::sample_plan;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(PlanReportTest, MillisecondsHaveThreeDecimalsOrAreADash) {
  EXPECT_EQ(ms_column(1.5), "1.500");
  EXPECT_EQ(ms_column(0.0004), "0.000");
  EXPECT_EQ(ms_column(std::nullopt), "-");
}

TEST(PlanReportTest, ShortenCutsToTheWidthEndingInDots) {
  EXPECT_EQ(shorten("abcdefgh", 8), "abcdefgh");
  EXPECT_EQ(shorten("abcdefgh", 6), "abc...");
}

TEST(PlanReportTest, EachBackendHasItsOwnColourAndAnUnknownOneIsWhite) {
  EXPECT_EQ(backend_color("no_such_backend"), "#ffffff");
  const Backend* native = BackendRegistry::global().find("native");
  ASSERT_NE(native, nullptr);
  EXPECT_EQ(backend_color("native"), native->report_color());
}

TEST(PlanReportTest, TheTextHeadsWithStrategyModelMachineShapesAndTotals) {
  const std::string text = plan_to_text(sample_plan());
  EXPECT_EQ(text.rfind("plan: collage   model: resnet18.onnx   threads: 2\n"
                       "machine: AMD EPYC|avx2,fma|t2\n"
                       "input shapes: input=[1,3,224,224]\n"
                       "estimated: 1.350 ms   measured end to end: - ms\n",
                       0),
            0u)
      << text;
}

TEST(PlanReportTest, EachPartitionLineHasItsOpsCostAlternativesAndBoundaryValues) {
  const std::string text = plan_to_text(sample_plan());
  const std::size_t conv = text.find("  0  onednn    conv_bias_relu         Conv+Relu");
  const std::size_t pool = text.find("  1  native    op                     GlobalAveragePool");
  ASSERT_NE(conv, std::string::npos) << text;
  ASSERT_NE(pool, std::string::npos) << text;
  EXPECT_LT(conv, pool);
  EXPECT_TRUE(contains(text, "1.250  native/1 2.500, xnnpack/2 invalid\n")) << text;
  EXPECT_TRUE(contains(text, "     in: input   out: relu_out\n")) << text;
  EXPECT_TRUE(contains(text, "     in: relu_out   out: pooled\n")) << text;
}

TEST(PlanReportTest, TheTextEndsWithPartitionsPerBackendAndTheSearchStatistics) {
  const std::string text = plan_to_text(sample_plan());
  EXPECT_TRUE(contains(text,
                       "\npartitions per backend: native 1 onednn 1\n"
                       "search: 40 candidates, 30 measured, 10 cache hits, 2 invalid, "
                       "77 states, 12.5 s\n"
                       "search: 7 routes left unexpanded by the cap on mixed-backend routes per "
                       "covered set\n"))
      << text;
}

TEST(PlanReportTest, APlanFoundWithoutASearchHasNoSearchLine) {
  Plan plan = sample_plan();
  plan.search = {};
  EXPECT_FALSE(contains(plan_to_text(plan), "search:"));
}

TEST(PlanReportTest, TheInContextColumnAppearsOnlyWhenAPartitionWasMeasured) {
  Plan plan = sample_plan();
  EXPECT_FALSE(contains(plan_to_text(plan), "ctx ms"));
  plan.partitions[1].measured_ms = 0.25;
  const std::string text = plan_to_text(plan);
  EXPECT_TRUE(contains(text, "ctx ms")) << text;
  EXPECT_TRUE(contains(text, "    0.100     0.250  \n")) << text;
}

TEST(PlanReportTest, ALongPartitionIsDescribedByItsCommonestOps) {
  Plan plan;
  PlanPartition big;
  big.backend = "native";
  big.ops = {"Conv", "Relu", "Conv", "Add",     "Conv", "Relu",
             "Mul",  "Conv", "Add",  "Sigmoid", "Relu", "Conv"};
  plan.partitions = {big};
  const std::string text = plan_to_text(plan);
  EXPECT_TRUE(contains(text, "Conv x5, Relu x3, Add x2, +2 more")) << text;
}

TEST(PlanReportTest, TheDrawingWithoutAModelConnectsPartitionsThroughTheirValues) {
  const std::string dot = plan_to_dot(sample_plan(), nullptr);
  EXPECT_EQ(dot.rfind("digraph plan {\n", 0), 0u);
  EXPECT_TRUE(
      contains(dot, "  p0 [id=\"partition_0\", label=\"#0 onednn\\nConv+Relu\\n1.250 ms\""));
  EXPECT_TRUE(contains(dot, "  p0 -> p1;\n")) << dot;
  EXPECT_FALSE(contains(dot, "p1 -> p0")) << dot;
  EXPECT_TRUE(contains(dot, "\"legend_onednn\" [label=\"onednn (1)\"")) << dot;
}

TEST(PlanReportTest, TheDrawingOfAModelClustersItsNodesByPartition) {
  Graph model;
  const TensorType type{DType::kFloat32, {1, 4}};
  ValueId x = model.add_input("x", type);
  ValueId a = model.add_value("a", type);
  ValueId b = model.add_value("b", type);
  model.add_node("Relu", {x}, {a}, {}, "relu");
  model.add_node("Abs", {a}, {b}, {}, "abs");
  model.add_output(b);
  Plan plan;
  PlanPartition first;
  first.backend = "onednn";
  first.nodes = {"relu"};
  PlanPartition second;
  second.backend = "native";
  second.nodes = {"abs"};
  plan.partitions = {first, second};
  const std::string dot = plan_to_dot(plan, &model);
  EXPECT_TRUE(contains(dot, "subgraph cluster_p0 {")) << dot;
  EXPECT_TRUE(contains(dot, "subgraph cluster_p1 {")) << dot;
  EXPECT_LT(dot.find("cluster_p0"), dot.find("    n0 [label=\"Relu\""));
  EXPECT_LT(dot.find("cluster_p1"), dot.find("    n1 [label=\"Abs\""));
  EXPECT_TRUE(contains(dot, "  n0 -> n1;\n")) << dot;
}

// x -> Relu -> If(cond; then: Abs then Neg, else: nothing) -> y.
Graph model_with_an_if() {
  const TensorType type{DType::kFloat32, {1, 4}};
  auto then_branch = std::make_shared<Graph>();
  ValueId inner = then_branch->add_input("inner", type);
  then_branch->captured = 1;
  ValueId abs = then_branch->add_value("abs_out", type);
  ValueId neg = then_branch->add_value("neg_out", type);
  then_branch->add_node("Abs", {inner}, {abs}, {}, "then/abs");
  then_branch->add_node("Neg", {abs}, {neg}, {}, "then/neg");
  then_branch->add_output(neg);
  auto else_branch = std::make_shared<Graph>();
  else_branch->add_output(else_branch->add_input("inner", type));
  else_branch->captured = 1;
  Graph model;
  ValueId x = model.add_input("x", type);
  ValueId flag = model.add_input("flag", TensorType{DType::kBool, {}});
  ValueId a = model.add_value("a", type);
  ValueId y = model.add_value("y", type);
  model.add_node("Relu", {x}, {a}, {}, "relu");
  Attributes branches;
  branches.set("then_branch", Subgraph(then_branch));
  branches.set("else_branch", Subgraph(else_branch));
  model.add_node("If", {flag, a}, {y}, branches, "choice");
  model.add_output(y);
  return model;
}

Plan plan_of_the_if_model() {
  Plan plan;
  PlanPartition first;
  first.backend = "onednn";
  first.nodes = {"relu"};
  first.ops = {"Relu"};
  PlanPartition second;
  second.backend = "native";
  second.nodes = {"choice"};
  second.ops = {"If"};
  plan.partitions = {first, second};
  return plan;
}

TEST(PlanReportTest, ANodeWithBodiesIsDrawnAsAClusterHoldingEachBody) {
  const Graph model = model_with_an_if();
  const std::string dot = plan_to_dot(plan_of_the_if_model(), &model);
  // The If itself stays the end of the edges that reach it, inside its cluster.
  EXPECT_TRUE(contains(dot, "subgraph cluster_n1 {")) << dot;
  EXPECT_TRUE(contains(dot, "n1 [label=\"If\"")) << dot;
  EXPECT_TRUE(contains(dot, "  n0 -> n1;\n")) << dot;
  // Then branch first, with its nodes and its edge; the else branch is empty.
  const std::size_t then_cluster = dot.find("subgraph cluster_n1_b0 {");
  const std::size_t else_cluster = dot.find("subgraph cluster_n1_b1 {");
  ASSERT_NE(then_cluster, std::string::npos) << dot;
  ASSERT_NE(else_cluster, std::string::npos) << dot;
  EXPECT_LT(then_cluster, dot.find("label=\"then_branch\""));
  EXPECT_LT(dot.find("label=\"then_branch\""), else_cluster);
  EXPECT_TRUE(contains(dot, "n1_b0_0 [label=\"Abs\"")) << dot;
  EXPECT_TRUE(contains(dot, "n1_b0_1 [label=\"Neg\"")) << dot;
  EXPECT_TRUE(contains(dot, "n1_b0_0 -> n1_b0_1;")) << dot;
  EXPECT_TRUE(contains(dot, "n1_b1_empty [label=\"(passes its inputs on)\"")) << dot;
  // Bodies take the colour of the backend that runs their node.
  EXPECT_TRUE(contains(dot, "n1_b0_0 [label=\"Abs\", fillcolor=\"" + backend_color("native")))
      << dot;
}

TEST(PlanReportTest, TheTextListsWhatEachBodyHoldsWhenTheModelIsGiven) {
  const Graph model = model_with_an_if();
  const Plan plan = plan_of_the_if_model();
  EXPECT_TRUE(plan_has_bodies(plan));
  const std::string text = plan_to_text(plan, &model);
  EXPECT_TRUE(contains(text, "     then_branch of If choice: 2 nodes: Abs+Neg\n")) << text;
  EXPECT_TRUE(contains(text, "     else_branch of If choice: 0 nodes: no ops\n")) << text;
  EXPECT_FALSE(contains(plan_to_text(plan), "then_branch")) << "without the model";
  EXPECT_FALSE(plan_has_bodies(sample_plan()));
}

TEST(PlanReportTest, QuotesAndBackslashesInNamesAreEscapedInTheDrawing) {
  Plan plan = sample_plan();
  plan.model_path = "dir\\my \"best\" model.onnx";
  const std::string dot = plan_to_dot(plan, nullptr);
  EXPECT_TRUE(contains(dot, "collage plan of dir\\\\my \\\"best\\\" model.onnx")) << dot;
}

}  // namespace
}  // namespace collage
