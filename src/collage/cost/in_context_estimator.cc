#include "collage/cost/in_context_estimator.h"

#include "collage/cost/cache_keys.h"
#include "collage/partition/partition_spec.h"

namespace collage {

PartitionOverheads PartitionOverheads::load(const MeasurementCache& cache,
                                            const std::string& machine,
                                            const std::vector<std::string>& backends,
                                            const std::string& model) {
  PartitionOverheads overheads;
  for (const std::string& backend : backends) {
    std::optional<CachedMeasurement> found = cache.find(overhead_key(backend, machine, model));
    if (found && found->valid) overheads.seconds[backend] = found->seconds;
  }
  return overheads;
}

void PartitionOverheads::store(MeasurementCache& cache, const std::string& machine,
                               const std::string& model) const {
  for (const auto& [backend, value] : seconds) {
    cache.store(overhead_key(backend, machine, model), CachedMeasurement::of_value(value));
  }
}

Cost InContextEstimator::estimate(const DataflowGraph& dfg, const CandidatePartition& candidate) {
  return with_overhead(candidate, isolated_.estimate(dfg, candidate));
}

BoundedCost InContextEstimator::bound(const DataflowGraph& dfg, const CandidatePartition& candidate,
                                      Fidelity at_least) {
  BoundedCost bounded = isolated_.bound(dfg, candidate, at_least);
  bounded.cost = with_overhead(candidate, bounded.cost);
  return bounded;
}

Cost InContextEstimator::with_overhead(const CandidatePartition& candidate, Cost cost) const {
  if (!cost.is_valid()) return cost;
  double extra = overheads_.of(candidate.spec_name());
  return extra > 0 ? cost + Cost::value(extra) : cost;
}

}  // namespace collage
