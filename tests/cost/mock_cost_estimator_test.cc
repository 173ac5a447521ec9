// MockCostEstimator: per-op costs per spec, the fusion discount and partition
// overhead, invalid candidates for ops without a cost, and its call log.
#include "collage/cost/mock_cost_estimator.h"

#include <gtest/gtest.h>

#include "cost/estimator_fixture.h"

namespace collage {
namespace {

using testing::EstimatorFixture;

TEST(MockCostEstimatorTest, SumsPerOpCostsOfTheSpec) {
  EstimatorFixture f;
  MockCostEstimator mock;
  mock.set_op_cost("lib", "Relu", 1.0).set_op_cost("lib", "Abs", 2.0);
  EXPECT_DOUBLE_EQ(mock.estimate(*f.dfg, f.candidate({"a", "b"})).seconds(), 3.0);
}

TEST(MockCostEstimatorTest, DiscountsCandidatesOfSeveralOps) {
  EstimatorFixture f;
  MockCostEstimator mock;
  mock.set_default_op_cost("lib", 1.0).set_fusion_discount(0.5).set_partition_overhead(0.25);
  EXPECT_DOUBLE_EQ(mock.estimate(*f.dfg, f.candidate({"a", "b"})).seconds(), 1.25);
  EXPECT_DOUBLE_EQ(mock.estimate(*f.dfg, f.candidate({"a"})).seconds(), 1.25);
}

TEST(MockCostEstimatorTest, AnOpWithoutCostMakesTheCandidateInvalid) {
  EstimatorFixture f;
  MockCostEstimator mock;
  mock.set_op_cost("lib", "Relu", 1.0);
  Cost cost = mock.estimate(*f.dfg, f.candidate({"a", "b"}));
  EXPECT_FALSE(cost.is_valid());
  EXPECT_EQ(cost.reason(), "lib does not run Abs");
}

TEST(MockCostEstimatorTest, CountsItsEstimates) {
  EstimatorFixture f;
  MockCostEstimator mock;
  mock.set_default_op_cost("lib", 1.0);
  mock.estimate(*f.dfg, f.candidate({"a"}));
  mock.estimate(*f.dfg, f.candidate({"b"}));
  EXPECT_EQ(mock.estimate_count(), 2u);
  EXPECT_EQ(mock.estimated(), (std::vector<std::string>{"lib:Relu{1}", "lib:Abs{2}"}));
}

}  // namespace
}  // namespace collage
