#include "collage/session/parts_retiming.h"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "collage/backends/registry.h"
#include "collage/cost/measurement_cache.h"
#include "cost/estimator_fixture.h"
#include "cost/scripted_measurer.h"
#include "onnx/temp_dir.h"

namespace collage {
namespace {

using testing::ScriptedMeasurer;

// A plan of one part, a native Relu, measured when the model was tuned;
// retime_parts_kept() times it again with the given seconds.
class PartsRetimingTest : public ::testing::Test {
 protected:
  PartsRetimingTest() : path_(dir_.file("measurements.sqlite")) {
    f_.spec = make_partition_spec("native", nullptr, {}, &BackendRegistry::global().native());
    cover_.push_back(ChosenPartition{f_.candidate({"a"}), Cost::zero()});
  }

  // What the part costs after a tune measured it at `tuned` seconds and a
  // later run timed it again at `again`; the messages reported go to
  // `reported`.
  double kept_after(double tuned, std::deque<double> again, std::vector<std::string>& reported) {
    std::unique_ptr<MeasurementCache> cache = MeasurementCache::open(path_);
    {
      ScriptedMeasurer measurer({tuned});
      MeasuringEstimator estimator(measurer, cache.get(), "machine");
      estimator.estimate(*f_.dfg, cover_.front().candidate);
    }
    const std::size_t timings = again.size();
    ScriptedMeasurer measurer(std::move(again));
    MeasuringEstimator estimator(measurer, cache.get(), "machine");
    retime_parts_kept(*f_.dfg, cover_, estimator,
                      [&](const TuneProgress& p) { reported.push_back(p.message); });
    EXPECT_EQ(measurer.left(), 0U);
    EXPECT_EQ(estimator.counters().retimed, static_cast<int>(timings));
    // Kept in the cache: a later run finds it without measuring.
    ScriptedMeasurer unused({});
    MeasuringEstimator later(unused, cache.get(), "machine");
    return later.estimate(*f_.dfg, cover_.front().candidate).seconds();
  }

  testing::EstimatorFixture f_;
  std::vector<ChosenPartition> cover_;
  testing::TempDir dir_;
  std::string path_;
};

TEST_F(PartsRetimingTest, EachPartIsTimedTwiceAndTheFasterNewTimingReplacesTheTunedOne) {
  static_assert(kPartTimings == 2);
  std::vector<std::string> reported;
  // Tuned in a fast spell; now slower, the first timing slower still (a
  // stall): the faster of the two new ones is kept, slower than the tuned.
  EXPECT_DOUBLE_EQ(kept_after(1e-3, {5e-3, 2e-3}, reported), 2e-3);
  ASSERT_EQ(reported.size(), 1U);
  EXPECT_NE(reported.front().find("timed again (2 times each, the faster kept), 2.000 ms in all "
                                  "(1.000 ms when measured before)"),
            std::string::npos)
      << reported.front();
}

TEST_F(PartsRetimingTest, AStallInTheSecondTimingLeavesTheFirst) {
  std::vector<std::string> reported;
  // Tuned in a slow spell: the first new timing stands over a stalled second.
  EXPECT_DOUBLE_EQ(kept_after(4e-3, {2e-3, 6e-3}, reported), 2e-3);
}

}  // namespace
}  // namespace collage
