#include "collage/plan/plan_builder.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "collage/backends/registry.h"
#include "collage/ir/structural_hash.h"
#include "collage/partition/partition_spec.h"
#include "partition/graph_builder.h"

namespace collage {
namespace {

using testing::GraphBuilder;
using testing::set_of;

// x -> a Relu -> b Abs (output), and candidates over it by name.
class PlanBuilderTest : public ::testing::Test {
 protected:
  PlanBuilderTest() {
    GraphBuilder b;
    ValueId x = b.input("x");
    b.output(b.op("Abs", {b.op("Relu", {x}, "a")}, "b"));
    graph_ = std::move(b.graph());
    dfg_ = std::make_unique<DataflowGraph>(graph_);
  }

  CandidatePartition candidate(const std::string& spec, const std::vector<std::string>& names,
                               const Backend* backend = nullptr) const {
    return {SubGraph(*dfg_, set_of(*dfg_, names)), make_partition_spec(spec, nullptr, {}, backend),
            "op"};
  }
  // Relu alone on native (1 ms), then Abs alone on native (2 ms).
  std::vector<ChosenPartition> two_singles() const {
    return {{candidate("native", {"a"}), Cost::value(1e-3)},
            {candidate("native", {"b"}), Cost::value(2e-3)}};
  }
  // The chosen partitions as the search estimated them.
  std::vector<EstimatedCandidate> estimated(const std::vector<ChosenPartition>& chosen) const {
    std::vector<EstimatedCandidate> all;
    for (const ChosenPartition& c : chosen) all.push_back({c.candidate, c.cost});
    return all;
  }

  Graph graph_;
  std::unique_ptr<DataflowGraph> dfg_;
};

TEST_F(PlanBuilderTest, ThePlanCarriesTheContextAndTheModelsHash) {
  PlanContext context{"collage", "m.onnx", {{"x", {1, 8}}}, "cpu|avx2|t4", 4, "basic"};
  Plan plan = build_plan(*dfg_, two_singles(), context);
  EXPECT_EQ(plan.strategy, "collage");
  EXPECT_EQ(plan.model_path, "m.onnx");
  EXPECT_EQ(plan.input_shapes.at("x"), (Shape{1, 8}));
  EXPECT_EQ(plan.machine, "cpu|avx2|t4");
  EXPECT_EQ(plan.threads, 4);
  EXPECT_EQ(plan.graph_opt, "basic");
  EXPECT_EQ(plan.model_hash, structural_hash_hex(graph_));
}

TEST_F(PlanBuilderTest, EachPartitionNamesItsNodesOpsAndBoundaryValuesInOrder) {
  Plan plan = build_plan(*dfg_, two_singles(), {});
  ASSERT_EQ(plan.partitions.size(), 2u);
  const PlanPartition& relu = plan.partitions[0];
  EXPECT_EQ(relu.backend, "native");
  EXPECT_EQ(relu.rule, "op");
  EXPECT_EQ(relu.nodes, (std::vector<std::string>{"a"}));
  EXPECT_EQ(relu.ops, (std::vector<std::string>{"Relu"}));
  EXPECT_EQ(relu.inputs, (std::vector<std::string>{"x"}));
  EXPECT_EQ(relu.outputs, (std::vector<std::string>{"a"}));
  EXPECT_EQ(plan.partitions[1].inputs, (std::vector<std::string>{"a"}));
  EXPECT_EQ(plan.partitions[1].outputs, (std::vector<std::string>{"b"}));
}

TEST_F(PlanBuilderTest, AStrategyWithoutEstimatesGivesAPlanWithoutCosts) {
  Plan plan = build_plan(*dfg_, two_singles(), {});
  EXPECT_FALSE(plan.estimated_ms.has_value());
  for (const PlanPartition& partition : plan.partitions) {
    EXPECT_FALSE(partition.estimated_ms.has_value());
    EXPECT_TRUE(partition.alternatives.empty());
  }
}

TEST_F(PlanBuilderTest, WithEstimatesThePlansCostIsTheSumOfItsPartitions) {
  std::vector<ChosenPartition> chosen = two_singles();
  Plan plan = build_plan(*dfg_, chosen, {}, estimated(chosen));
  EXPECT_DOUBLE_EQ(*plan.partitions[0].estimated_ms, 1.0);
  EXPECT_DOUBLE_EQ(*plan.partitions[1].estimated_ms, 2.0);
  ASSERT_TRUE(plan.estimated_ms.has_value());
  EXPECT_DOUBLE_EQ(*plan.estimated_ms, 3.0);
}

TEST_F(PlanBuilderTest, APartitionWithAnInvalidCostLeavesThePlanWithoutATotal) {
  std::vector<ChosenPartition> chosen = two_singles();
  chosen[1].cost = Cost::invalid("not measured");
  Plan plan = build_plan(*dfg_, chosen, {}, estimated(chosen));
  EXPECT_DOUBLE_EQ(*plan.partitions[0].estimated_ms, 1.0);
  EXPECT_FALSE(plan.partitions[1].estimated_ms.has_value());
  EXPECT_FALSE(plan.estimated_ms.has_value());
}

TEST_F(PlanBuilderTest, AlternativesAreTheOtherCandidatesForThePartitionCheapestFirst) {
  std::vector<ChosenPartition> chosen = two_singles();
  std::vector<EstimatedCandidate> all = estimated(chosen);
  all.push_back({candidate("xnnpack", {"a", "b"}), Cost::invalid("compile failed")});
  all.push_back({candidate("onednn", {"a"}), Cost::value(0.5e-3)});
  Plan plan = build_plan(*dfg_, chosen, {}, all);
  const std::vector<PlanAlternative>& alternatives = plan.partitions[0].alternatives;
  ASSERT_EQ(alternatives.size(), 2u);
  EXPECT_EQ(alternatives[0].backend, "onednn");
  EXPECT_EQ(alternatives[0].node_count, 1);
  EXPECT_DOUBLE_EQ(*alternatives[0].estimated_ms, 0.5);
  EXPECT_TRUE(alternatives[0].reason.empty());
  EXPECT_EQ(alternatives[1].backend, "xnnpack");
  EXPECT_EQ(alternatives[1].node_count, 2);
  EXPECT_FALSE(alternatives[1].estimated_ms.has_value());
  EXPECT_EQ(alternatives[1].reason, "compile failed");
  // Nothing else started at Abs.
  EXPECT_TRUE(plan.partitions[1].alternatives.empty());
}

TEST_F(PlanBuilderTest, TheVersionOfEveryBackendThePlanUsesIsRecorded) {
  const Backend* native = BackendRegistry::global().find("native");
  ASSERT_NE(native, nullptr);
  std::vector<ChosenPartition> chosen = {{candidate("native", {"a"}, native), Cost::value(1e-3)},
                                         {candidate("mock", {"b"}), Cost::value(1e-3)}};
  Plan plan = build_plan(*dfg_, chosen, {});
  EXPECT_EQ(plan.backend_versions,
            (std::map<std::string, std::string>{{"native", native->version()}}));
}

TEST(CostMsTest, AValidCostIsInMillisecondsAndAnInvalidOneHasNone) {
  EXPECT_DOUBLE_EQ(*cost_ms(Cost::value(0.0015)), 1.5);
  EXPECT_FALSE(cost_ms(Cost::invalid("no")).has_value());
}

}  // namespace
}  // namespace collage
