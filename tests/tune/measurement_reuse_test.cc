// Measurements outlive the run that made them: a second run on the same
// model measures nothing, and another model reuses the measurements of the
// sub-graphs it shares.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "collage/backends/registry.h"
#include "collage/cost/machine_fingerprint.h"
#include "collage/cost/measurement_cache.h"
#include "collage/cost/measurer.h"
#include "collage/cost/measuring_estimator.h"
#include "collage/search/backend_spec.h"
#include "collage/search/collage_partitioner.h"
#include "onnx/temp_dir.h"
#include "tune/planted_backends.h"
#include "tune/tune_models.h"

namespace collage {
namespace {

struct TuneOutcome {
  EstimatorCounters counters;
  testing::PartitionSummary partitions;
  std::size_t candidates = 0;
  int invalid_candidates = 0;
};

class MeasurementReuseTest : public ::testing::Test {
 protected:
  MeasurementReuseTest() : cache_path_(dir_.file("measurements.sqlite")) {
    options_.threads = 1;
    // Every backend of this build; native alone is enough for these tests.
    backends_ = BackendRegistry::global().all();
  }

  // One collage_partition of `model` through a cache opened afresh from
  // the file, as a new process would.
  TuneOutcome tune(const Graph& model) {
    InProcessMeasurer measurer(BackendRegistry::global().get("native"), options_);
    return tune(model, measurer);
  }
  TuneOutcome tune(const Graph& model, Measurer& measurer) {
    std::unique_ptr<MeasurementCache> cache = MeasurementCache::open(cache_path_);
    MeasuringEstimator estimator(measurer, cache.get(), MachineFingerprint::current(1).to_string());
    DataflowGraph dfg(model);
    CollageResult result = collage_partition(dfg, make_backend_specs(backends_), estimator);
    TuneOutcome outcome{estimator.counters(), testing::summarize(dfg, result.search.partitions),
                        result.candidates.size()};
    for (const EstimatedCandidate& e : result.candidates) {
      if (!e.cost.is_valid()) ++outcome.invalid_candidates;
    }
    return outcome;
  }

  int cache_size() const { return MeasurementCache::open(cache_path_)->size(); }

  testing::TempDir dir_;
  std::string cache_path_;
  MeasureOptions options_;
  std::vector<const Backend*> backends_;
};

TEST_F(MeasurementReuseTest, AFirstRunMeasuresAndStoresEveryDistinctCandidate) {
  TuneOutcome first = tune(testing::dense_block_model());
  EXPECT_GT(first.counters.measured, 0);
  EXPECT_EQ(first.counters.cache_hits, 0);
  EXPECT_EQ(cache_size(), first.counters.measured);
}

TEST_F(MeasurementReuseTest, ASecondRunWithTheSameCacheMeasuresNothing) {
  Graph model = testing::dense_block_model();
  TuneOutcome first = tune(model);
  TuneOutcome second = tune(model);
  EXPECT_EQ(second.counters.measured, 0);
  EXPECT_EQ(second.counters.cache_hits, first.counters.measured);
  EXPECT_EQ(second.counters.requests, first.counters.requests);
}

TEST_F(MeasurementReuseTest, ASecondRunFromTheCacheChoosesTheSamePartitions) {
  Graph model = testing::dense_block_model();
  TuneOutcome first = tune(model);
  TuneOutcome second = tune(model);
  ASSERT_FALSE(first.partitions.empty());
  EXPECT_EQ(second.partitions, first.partitions);
}

TEST_F(MeasurementReuseTest, MeasuringNowTimesAgainAndKeepsNothing) {
  Graph model = testing::dense_block_model();
  tune(model);
  const int stored = cache_size();
  InProcessMeasurer measurer(BackendRegistry::global().get("native"), options_);
  std::unique_ptr<MeasurementCache> cache = MeasurementCache::open(cache_path_);
  MeasuringEstimator estimator(measurer, cache.get(), MachineFingerprint::current(1).to_string());
  DataflowGraph dfg(model);
  CollageResult result = collage_partition(dfg, make_backend_specs(backends_), estimator);
  ASSERT_FALSE(result.search.partitions.empty());
  const CandidatePartition& candidate = result.search.partitions.front().candidate;
  ASSERT_NE(candidate.spec->backend, nullptr);
  const EstimatorCounters before = estimator.counters();
  const Cost cached = estimator.estimate(dfg, candidate);
  const Cost now = estimator.retime(dfg, candidate, MeasuringEstimator::Keep::kNeither);
  ASSERT_TRUE(now.is_valid()) << now.reason();
  EXPECT_GT(now.seconds(), 0);
  // Neither the memo nor the cache takes the new time: the search's
  // estimate stays as it was.
  EXPECT_EQ(estimator.estimate(dfg, candidate).seconds(), cached.seconds());
  EXPECT_EQ(estimator.counters().measured, before.measured);
  EXPECT_EQ(cache->size(), stored);
}

TEST_F(MeasurementReuseTest, AnotherModelWithTheSameBlockReusesItsMeasurements) {
  TuneOutcome block = tune(testing::dense_block_model());
  TuneOutcome larger = tune(testing::dense_block_then_scale_model());
  // The shared dense layer (renamed) comes from the cache; only what is new
  // around it is measured.
  EXPECT_GT(larger.counters.cache_hits, 0);
  EXPECT_LE(larger.counters.cache_hits, block.counters.measured);
  EXPECT_GT(larger.counters.measured, 0);
  EXPECT_EQ(cache_size(), block.counters.measured + larger.counters.measured);
}

TEST_F(MeasurementReuseTest, AFailedMeasurementIsCachedAndStaysInvalid) {
  testing::PlantedBackends planted;
  backends_ = {&planted.native(), &planted.planted(testing::Fault::kWrongNumbers)};
  Graph model = testing::relu_add_mul_model();
  TuneOutcome first = tune(model);
  TuneOutcome second = tune(model);
  ASSERT_GT(first.invalid_candidates, 0);
  EXPECT_EQ(second.counters.measured, 0);
  EXPECT_EQ(second.invalid_candidates, first.invalid_candidates);
  for (const auto& [backend, names] : second.partitions) EXPECT_EQ(backend, "native");
}

// Measurements of every backend but native fail the way a crashing or
// hanging worker does; native is measured in process.
class CrashingMeasurer : public Measurer {
 public:
  explicit CrashingMeasurer(const MeasureOptions& options)
      : native_(BackendRegistry::global().get("native"), options) {}
  Cost measure(const Graph& model, const std::vector<NodeId>& nodes,
               const Backend& backend) override {
    if (backend.name() == "native") return native_.measure(model, nodes, backend);
    return Cost::transient_invalid(backend.name() + ": the worker died of signal 11");
  }
  // Keyed as the measurer of the next run keys the same candidates.
  std::string context_of(const Graph& model, const std::vector<NodeId>& nodes) const override {
    return native_.context_of(model, nodes);
  }

 private:
  InProcessMeasurer native_;
};

TEST_F(MeasurementReuseTest, ACrashIsCachedWithItsCauseAndMeasuredAgainByTheNextRun) {
  // Every backend of this build; all but native crash.
  if (backends_.size() < 2) GTEST_SKIP() << "needs a backend besides native";
  Graph model = testing::relu_add_mul_model();
  CrashingMeasurer crashing(options_);
  TuneOutcome first = tune(model, crashing);
  int transient = 0;
  for (const auto& [backend, counts] : MeasurementCache::open(cache_path_)->stats().by_backend) {
    transient += counts.transient;
  }
  ASSERT_GT(transient, 0);
  EXPECT_EQ(cache_size(), first.counters.measured);
  // The next run measures the crashed candidates again and keeps the rest.
  TuneOutcome second = tune(model);
  EXPECT_EQ(second.counters.measured, transient);
  EXPECT_EQ(second.counters.cache_hits, first.counters.measured - transient);
  EXPECT_EQ(cache_size(), first.counters.measured);
  EXPECT_EQ(tune(model).counters.measured, 0);
}

}  // namespace
}  // namespace collage
