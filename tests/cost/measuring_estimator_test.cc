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

// A native Relu measured by a ScriptedMeasurer into a cache file, and
// what a later run finds for it in that file.
class MeasuringEstimatorTest : public ::testing::Test {
 protected:
  MeasuringEstimatorTest() : relu_(native_relu(f_)), path_(dir_.file("measurements.sqlite")) {}

  static CandidatePartition native_relu(testing::EstimatorFixture& f) {
    f.spec = make_partition_spec("native", nullptr, {}, &BackendRegistry::global().native());
    return f.candidate({"a"});
  }

  // The Relu's cost as a new run finds it in the cache, measuring nothing.
  double cached_seconds() {
    std::unique_ptr<MeasurementCache> cache = MeasurementCache::open(path_);
    ScriptedMeasurer unused({});
    MeasuringEstimator later(unused, cache.get(), "machine");
    const double seconds = later.estimate(*f_.dfg, relu_).seconds();
    EXPECT_EQ(later.counters().cache_hits, 1);
    return seconds;
  }

  testing::EstimatorFixture f_;
  CandidatePartition relu_;
  testing::TempDir dir_;
  std::string path_;
};

TEST_F(MeasuringEstimatorTest, AMeasurementTakenAgainKeepsTheFasterOfTheTwoInMemoryAndInTheCache) {
  {
    std::unique_ptr<MeasurementCache> cache = MeasurementCache::open(path_);
    ScriptedMeasurer measurer({2e-3, 1e-3, 3e-3});
    MeasuringEstimator estimator(measurer, cache.get(), "machine");
    EXPECT_DOUBLE_EQ(estimator.estimate(*f_.dfg, relu_).seconds(), 2e-3);
    EXPECT_DOUBLE_EQ(estimator.retime(*f_.dfg, relu_, MeasuringEstimator::Keep::kFaster).seconds(),
                     1e-3);
    EXPECT_DOUBLE_EQ(estimator.estimate(*f_.dfg, relu_).seconds(), 1e-3);
    // Slower the third time: the faster measurement stays.
    EXPECT_DOUBLE_EQ(estimator.retime(*f_.dfg, relu_, MeasuringEstimator::Keep::kFaster).seconds(),
                     1e-3);
    EXPECT_EQ(estimator.counters().measured, 1);
    EXPECT_EQ(estimator.counters().retimed, 2);
  }
  EXPECT_DOUBLE_EQ(cached_seconds(), 1e-3);
}

TEST_F(MeasuringEstimatorTest, ARetimedMeasurementKeptAsNewerReplacesTheOneBeforeFasterOrSlower) {
  {
    std::unique_ptr<MeasurementCache> cache = MeasurementCache::open(path_);
    ScriptedMeasurer measurer({1e-3, 3e-3, 2e-3});
    MeasuringEstimator estimator(measurer, cache.get(), "machine");
    EXPECT_DOUBLE_EQ(estimator.estimate(*f_.dfg, relu_).seconds(), 1e-3);
    // Slower now: the machine runs slower than when it was measured.
    EXPECT_DOUBLE_EQ(estimator.retime(*f_.dfg, relu_, MeasuringEstimator::Keep::kNewer).seconds(),
                     3e-3);
    EXPECT_DOUBLE_EQ(estimator.estimate(*f_.dfg, relu_).seconds(), 3e-3);
    EXPECT_DOUBLE_EQ(estimator.retime(*f_.dfg, relu_, MeasuringEstimator::Keep::kNewer).seconds(),
                     2e-3);
    EXPECT_EQ(estimator.counters().retimed, 2);
  }
  EXPECT_DOUBLE_EQ(cached_seconds(), 2e-3);
}

}  // namespace
}  // namespace collage
