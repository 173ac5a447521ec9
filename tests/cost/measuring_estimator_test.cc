#include "collage/cost/measuring_estimator.h"

#include <gtest/gtest.h>

#include <deque>

#include "collage/backends/registry.h"
#include "cost/estimator_fixture.h"
#include "onnx/temp_dir.h"

namespace collage {
namespace {

// Answers each measurement with the next of the given seconds.
class ScriptedMeasurer : public Measurer {
 public:
  explicit ScriptedMeasurer(std::deque<double> seconds) : seconds_(std::move(seconds)) {}
  Cost measure(const Graph&, const std::vector<NodeId>&, const Backend&) override {
    const double next = seconds_.front();
    seconds_.pop_front();
    return Cost::measured(next, next, 5);
  }

 private:
  std::deque<double> seconds_;
};

TEST(MeasuringEstimatorTest, AMeasurementTakenAgainKeepsTheFasterOfTheTwoInMemoryAndInTheCache) {
  testing::EstimatorFixture f;
  f.spec = make_partition_spec("native", nullptr, {}, &BackendRegistry::global().native());
  const CandidatePartition relu = f.candidate({"a"});
  testing::TempDir dir;
  const std::string path = dir.file("measurements.sqlite");
  {
    std::unique_ptr<MeasurementCache> cache = MeasurementCache::open(path);
    ScriptedMeasurer measurer({2e-3, 1e-3, 3e-3});
    MeasuringEstimator estimator(measurer, cache.get(), "machine");
    EXPECT_DOUBLE_EQ(estimator.estimate(*f.dfg, relu).seconds(), 2e-3);
    EXPECT_DOUBLE_EQ(estimator.remeasure(*f.dfg, relu).seconds(), 1e-3);
    EXPECT_DOUBLE_EQ(estimator.estimate(*f.dfg, relu).seconds(), 1e-3);
    // Slower the third time: the faster measurement stays.
    EXPECT_DOUBLE_EQ(estimator.remeasure(*f.dfg, relu).seconds(), 1e-3);
    EXPECT_EQ(estimator.counters().measured, 1);
    EXPECT_EQ(estimator.counters().remeasured, 2);
  }
  std::unique_ptr<MeasurementCache> cache = MeasurementCache::open(path);
  ScriptedMeasurer unused({});
  MeasuringEstimator later(unused, cache.get(), "machine");
  EXPECT_DOUBLE_EQ(later.estimate(*f.dfg, relu).seconds(), 1e-3);
  EXPECT_EQ(later.counters().cache_hits, 1);
}

TEST(MeasuringEstimatorTest, ARefreshedMeasurementReplacesTheOneBeforeFasterOrSlower) {
  testing::EstimatorFixture f;
  f.spec = make_partition_spec("native", nullptr, {}, &BackendRegistry::global().native());
  const CandidatePartition relu = f.candidate({"a"});
  testing::TempDir dir;
  const std::string path = dir.file("measurements.sqlite");
  {
    std::unique_ptr<MeasurementCache> cache = MeasurementCache::open(path);
    ScriptedMeasurer measurer({1e-3, 3e-3, 2e-3});
    MeasuringEstimator estimator(measurer, cache.get(), "machine");
    EXPECT_DOUBLE_EQ(estimator.estimate(*f.dfg, relu).seconds(), 1e-3);
    // Slower now: the machine runs slower than when it was measured.
    EXPECT_DOUBLE_EQ(estimator.refresh(*f.dfg, relu).seconds(), 3e-3);
    EXPECT_DOUBLE_EQ(estimator.estimate(*f.dfg, relu).seconds(), 3e-3);
    EXPECT_DOUBLE_EQ(estimator.refresh(*f.dfg, relu).seconds(), 2e-3);
    EXPECT_EQ(estimator.counters().remeasured, 2);
  }
  std::unique_ptr<MeasurementCache> cache = MeasurementCache::open(path);
  ScriptedMeasurer unused({});
  MeasuringEstimator later(unused, cache.get(), "machine");
  EXPECT_DOUBLE_EQ(later.estimate(*f.dfg, relu).seconds(), 2e-3);
}

}  // namespace
}  // namespace collage
