// FunctionCostEstimator: the cost is what its function answers.
#include "collage/cost/function_cost_estimator.h"

#include <gtest/gtest.h>

#include "cost/estimator_fixture.h"

namespace collage {
namespace {

using testing::EstimatorFixture;

TEST(FunctionCostEstimatorTest, AsksTheFunction) {
  EstimatorFixture f;
  FunctionCostEstimator estimator([](const DataflowGraph&, const CandidatePartition& c) {
    return Cost::value(static_cast<double>(c.sub_graph.size()));
  });
  EXPECT_DOUBLE_EQ(estimator.estimate(*f.dfg, f.candidate({"a", "b"})).seconds(), 2.0);
}

TEST(FunctionCostEstimatorTest, AnInvalidAnswerKeepsItsReasonAndTransience) {
  EstimatorFixture f;
  std::vector<std::string> asked;
  FunctionCostEstimator estimator([&asked](const DataflowGraph&, const CandidatePartition& c) {
    asked.push_back(c.spec_name());
    return Cost::transient_invalid("worker crashed");
  });
  Cost cost = estimator.estimate(*f.dfg, f.candidate({"a"}));
  EXPECT_FALSE(cost.is_valid());
  EXPECT_TRUE(cost.is_transient());
  EXPECT_EQ(cost.reason(), "worker crashed");
  EXPECT_EQ(asked, (std::vector<std::string>{"lib"}));
}

}  // namespace
}  // namespace collage
