#include <gtest/gtest.h>

#include "collage/cost/function_cost_estimator.h"
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

}  // namespace
}  // namespace collage
