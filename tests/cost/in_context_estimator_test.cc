// InContextEstimator: the isolated cost plus its backend's per-partition
// overhead; PartitionOverheads stored per machine and per model.
#include "collage/cost/in_context_estimator.h"

#include <gtest/gtest.h>

#include "collage/cost/function_cost_estimator.h"
#include "collage/cost/measurement_cache.h"
#include "cost/estimator_fixture.h"

namespace collage {
namespace {

using testing::EstimatorFixture;

TEST(InContextEstimatorTest, AddsItsBackendsOverheadToEveryValidCandidate) {
  EstimatorFixture f;
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
