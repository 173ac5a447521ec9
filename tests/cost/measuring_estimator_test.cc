#include "collage/cost/measuring_estimator.h"

#include <gtest/gtest.h>

#include <deque>

#include "collage/backends/registry.h"
#include "cost/estimator_fixture.h"
#include "cost/scripted_measurer.h"
#include "onnx/temp_dir.h"

namespace collage {
namespace {

using testing::ScriptedMeasurer;

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

TEST_F(MeasuringEstimatorTest, BoundsAScreenThenTheMeasurementEachAsSureAsWhatIsKnown) {
  {
    std::unique_ptr<MeasurementCache> cache = MeasurementCache::open(path_);
    ScriptedMeasurer measurer({1e-3}, {0.9e-3});
    MeasuringEstimator estimator(measurer, cache.get(), "machine");
    // Nothing known of native Relus yet: a bound of nothing, at no cost.
    BoundedCost bounded = estimator.bound(*f_.dfg, relu_, Fidelity::kBound);
    EXPECT_EQ(bounded.fidelity, Fidelity::kBound);
    EXPECT_DOUBLE_EQ(bounded.cost.seconds(), 0);
    bounded = estimator.bound(*f_.dfg, relu_, Fidelity::kScreened);
    EXPECT_EQ(bounded.fidelity, Fidelity::kScreened);
    EXPECT_DOUBLE_EQ(bounded.cost.seconds(), 0.9e-3);
    // A screen taken is what a bound reads from then on, screened once.
    bounded = estimator.bound(*f_.dfg, relu_, Fidelity::kBound);
    EXPECT_EQ(bounded.fidelity, Fidelity::kScreened);
    EXPECT_EQ(estimator.counters().screened, 1);
    EXPECT_EQ(estimator.counters().measured, 0);
    EXPECT_DOUBLE_EQ(estimator.bound(*f_.dfg, relu_, Fidelity::kExact).cost.seconds(), 1e-3);
    bounded = estimator.bound(*f_.dfg, relu_, Fidelity::kBound);
    EXPECT_EQ(bounded.fidelity, Fidelity::kExact);
    EXPECT_DOUBLE_EQ(bounded.cost.seconds(), 1e-3);
    EXPECT_EQ(estimator.counters().measured, 1);
  }
  {
    // A later run finds the measurement in the cache: exact, nothing run.
    std::unique_ptr<MeasurementCache> cache = MeasurementCache::open(path_);
    ScriptedMeasurer unused({});
    MeasuringEstimator later(unused, cache.get(), "machine");
    BoundedCost bounded = later.bound(*f_.dfg, relu_, Fidelity::kBound);
    EXPECT_EQ(bounded.fidelity, Fidelity::kExact);
    EXPECT_DOUBLE_EQ(bounded.cost.seconds(), 1e-3);
    EXPECT_EQ(later.counters().cache_hits, 1);
  }
}

TEST_F(MeasuringEstimatorTest, AScreenFoundInTheCacheIsNotTakenAgain) {
  {
    std::unique_ptr<MeasurementCache> cache = MeasurementCache::open(path_);
    ScriptedMeasurer measurer({}, {0.9e-3});
    MeasuringEstimator estimator(measurer, cache.get(), "machine");
    EXPECT_EQ(estimator.bound(*f_.dfg, relu_, Fidelity::kScreened).fidelity, Fidelity::kScreened);
  }
  std::unique_ptr<MeasurementCache> cache = MeasurementCache::open(path_);
  ScriptedMeasurer unused({});
  MeasuringEstimator later(unused, cache.get(), "machine");
  BoundedCost bounded = later.bound(*f_.dfg, relu_, Fidelity::kScreened);
  EXPECT_EQ(bounded.fidelity, Fidelity::kScreened);
  EXPECT_DOUBLE_EQ(bounded.cost.seconds(), 0.9e-3);
  EXPECT_EQ(later.counters().screened, 0);
}

}  // namespace
}  // namespace collage
