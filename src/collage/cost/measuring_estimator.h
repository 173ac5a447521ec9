// MeasuringEstimator: candidate costs by measurement, with a persistent cache.
//
// The default estimator of `collage tune`. For a candidate it builds the
// cache key (structural hash of the extracted partition, backend name and
// version, machine fingerprint), answers from this run's memo or the
// persistent cache when it can, and otherwise asks the Measurer and stores
// the result at once. Identical partitions (every bottleneck block of a
// ResNet) are therefore measured once per machine, ever.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "collage/cost/cost_estimator.h"
#include "collage/cost/measurement_cache.h"
#include "collage/cost/measurer.h"

namespace collage {

struct EstimatorCounters {
  // estimate() calls.
  int requests = 0;
  // Distinct partitions actually measured in this run.
  int measured = 0;
  // Answered by the persistent cache.
  int cache_hits = 0;
  // Answered by an identical partition measured earlier in this run.
  int memo_hits = 0;
  // Invalid results (measured or cached).
  int invalid = 0;
};

class MeasuringEstimator : public CostEstimator {
 public:
  // `cache` may be null (no persistence). `machine` is the fingerprint text.
  MeasuringEstimator(Measurer& measurer, MeasurementCache* cache, std::string machine);

  Cost estimate(const DataflowGraph& dfg, const CandidatePartition& candidate) override;

  const EstimatorCounters& counters() const { return counters_; }

 private:
  Measurer& measurer_;
  MeasurementCache* cache_;
  std::string machine_;
  std::map<std::string, Cost> memo_;
  EstimatorCounters counters_;
};

// A cached measurement as a Cost, and back.
Cost cost_from_cache(const CachedMeasurement& measurement);
CachedMeasurement cache_entry_from_cost(const Cost& cost);

}  // namespace collage
