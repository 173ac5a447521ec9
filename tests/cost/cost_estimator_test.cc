#include <gtest/gtest.h>

#include "collage/cost/function_cost_estimator.h"
#include "collage/cost/in_context_estimator.h"
#include "collage/cost/measurement_cache.h"
#include "collage/cost/mock_cost_estimator.h"
#include "collage/partition/partition_spec.h"
#include "partition/graph_builder.h"

namespace collage {
namespace {

using testing::GraphBuilder;
using testing::set_of;

// x -> a Relu -> b Abs (output)
struct Fixture {
  Graph graph;
  std::unique_ptr<DataflowGraph> dfg;
  PartitionSpecPtr spec = make_partition_spec("lib", nullptr);

  Fixture() {
    GraphBuilder b;
    ValueId x = b.input("x");
    b.output(b.op("Abs", {b.op("Relu", {x}, "a")}, "b"));
    graph = std::move(b.graph());
    dfg = std::make_unique<DataflowGraph>(graph);
  }
  CandidatePartition candidate(const std::vector<std::string>& names) const {
    return {SubGraph(*dfg, set_of(*dfg, names)), spec, "test"};
  }
};

TEST(MockCostEstimatorTest, SumsPerOpCostsOfTheSpec) {
  Fixture f;
  MockCostEstimator mock;
  mock.set_op_cost("lib", "Relu", 1.0).set_op_cost("lib", "Abs", 2.0);
  EXPECT_DOUBLE_EQ(mock.estimate(*f.dfg, f.candidate({"a", "b"})).seconds(), 3.0);
}

TEST(MockCostEstimatorTest, DiscountsCandidatesOfSeveralOps) {
  Fixture f;
  MockCostEstimator mock;
  mock.set_default_op_cost("lib", 1.0).set_fusion_discount(0.5).set_partition_overhead(0.25);
  EXPECT_DOUBLE_EQ(mock.estimate(*f.dfg, f.candidate({"a", "b"})).seconds(), 1.25);
  EXPECT_DOUBLE_EQ(mock.estimate(*f.dfg, f.candidate({"a"})).seconds(), 1.25);
}

TEST(MockCostEstimatorTest, AnOpWithoutCostMakesTheCandidateInvalid) {
  Fixture f;
  MockCostEstimator mock;
  mock.set_op_cost("lib", "Relu", 1.0);
  Cost cost = mock.estimate(*f.dfg, f.candidate({"a", "b"}));
  EXPECT_FALSE(cost.is_valid());
  EXPECT_EQ(cost.reason(), "lib does not run Abs");
}

TEST(MockCostEstimatorTest, CountsItsEstimates) {
  Fixture f;
  MockCostEstimator mock;
  mock.set_default_op_cost("lib", 1.0);
  mock.estimate(*f.dfg, f.candidate({"a"}));
  mock.estimate(*f.dfg, f.candidate({"b"}));
  EXPECT_EQ(mock.estimate_count(), 2u);
  EXPECT_EQ(mock.estimated(), (std::vector<std::string>{"lib:Relu{1}", "lib:Abs{2}"}));
}

TEST(FunctionCostEstimatorTest, AsksTheFunction) {
  Fixture f;
  FunctionCostEstimator estimator([](const DataflowGraph&, const CandidatePartition& c) {
    return Cost::value(static_cast<double>(c.sub_graph.size()));
  });
  EXPECT_DOUBLE_EQ(estimator.estimate(*f.dfg, f.candidate({"a", "b"})).seconds(), 2.0);
}

TEST(InContextEstimatorTest, AddsItsBackendsOverheadToEveryValidCandidate) {
  Fixture f;
  FunctionCostEstimator isolated([](const DataflowGraph&, const CandidatePartition& c) {
    return c.sub_graph.size() == 1 ? Cost::value(1e-3) : Cost::invalid("too big");
  });
  PartitionOverheads overheads;
  overheads.seconds["lib"] = 2e-5;
  overheads.seconds["other"] = 1.0;
  InContextEstimator in_context(isolated, overheads);
  EXPECT_DOUBLE_EQ(in_context.estimate(*f.dfg, f.candidate({"a"})).seconds(), 1.02e-3);
  Cost invalid = in_context.estimate(*f.dfg, f.candidate({"a", "b"}));
  EXPECT_FALSE(invalid.is_valid());
  EXPECT_EQ(invalid.reason(), "too big");
}

TEST(InContextEstimatorTest, OverheadsAreStoredPerMachineAndPerModel) {
  auto cache = MeasurementCache::in_memory();
  PartitionOverheads machine_wide;
  machine_wide.seconds = {{"native", 1e-6}, {"xnnpack", 3e-6}};
  machine_wide.store(*cache, "machine A");
  PartitionOverheads for_model;
  for_model.seconds = {{"native", 5e-6}};
  for_model.store(*cache, "machine A", "model 1");

  EXPECT_EQ(PartitionOverheads::load(*cache, "machine A", {"native", "xnnpack"}).seconds,
            machine_wide.seconds);
  EXPECT_EQ(PartitionOverheads::load(*cache, "machine A", {"native", "xnnpack"}, "model 1").seconds,
            for_model.seconds);
  EXPECT_TRUE(PartitionOverheads::load(*cache, "machine B", {"native"}).seconds.empty());
  EXPECT_TRUE(PartitionOverheads::load(*cache, "machine A", {"native"}, "model 2").seconds.empty());
}

}  // namespace
}  // namespace collage
