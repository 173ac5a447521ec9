// InContextEstimator: a candidate's cost as a plan will pay it.
//
// A candidate is measured alone, in the caches a plan leaves
// (cache_state.h), but its thread pool stays awake and no other library
// runs between its runs. In a plan the same kernel follows another
// backend's kernel, and every partition adds the executor's hand-off and
// the wake-up of a pool another library left idle: a cost per partition
// that the isolated measurement cannot see, and that makes a plan of many
// tiny partitions look free (docs/partitioning.md, "Costs in context").
//
// This estimator adds that cost, per backend, to every valid candidate, so
// the search weighs a boundary against what it saves. The per-partition
// overheads come from profiling whole plans on this machine
// (PartitionOverheads), are stored in the measurement cache under the
// machine's fingerprint, and are refined every time a plan is profiled.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collage/cost/cost_estimator.h"
#include "collage/cost/measurement_cache.h"

namespace collage {

// Seconds a partition of each backend costs in a plan beyond its isolated
// measurement. A backend that is not listed costs nothing extra.
struct PartitionOverheads {
  std::map<std::string, double> seconds;

  double of(const std::string& backend) const {
    auto it = seconds.find(backend);
    return it == seconds.end() ? 0.0 : it->second;
  }

  // The overheads stored for `machine` (none stored: empty). With a
  // non-empty `model`, those stored for that model (its structural hash):
  // the ones its kept plan was found with, so that tuning it again finds
  // the same plan without profiling.
  static PartitionOverheads load(const MeasurementCache& cache, const std::string& machine,
                                 const std::vector<std::string>& backends,
                                 const std::string& model = "");
  void store(MeasurementCache& cache, const std::string& machine,
             const std::string& model = "") const;
};

class InContextEstimator : public CostEstimator {
 public:
  InContextEstimator(CostEstimator& isolated, PartitionOverheads overheads)
      : isolated_(isolated), overheads_(std::move(overheads)) {}

  Cost estimate(const DataflowGraph& dfg, const CandidatePartition& candidate) override;
  void prepare(const DataflowGraph& dfg,
               const std::vector<CandidatePartition>& candidates) override {
    isolated_.prepare(dfg, candidates);
  }
  void prefetch(const DataflowGraph& dfg,
                const std::vector<CandidatePartition>& candidates) override {
    isolated_.prefetch(dfg, candidates);
  }
  bool dear_to_screen(const CandidatePartition& candidate) const override {
    return isolated_.dear_to_screen(candidate);
  }
  // The isolated estimator's bound with the overhead added, as estimate().
  BoundedCost bound(const DataflowGraph& dfg, const CandidatePartition& candidate,
                    Fidelity at_least) override;

  const PartitionOverheads& overheads() const { return overheads_; }

 private:
  // `cost` with the candidate's backend's overhead added (when valid).
  Cost with_overhead(const CandidatePartition& candidate, Cost cost) const;

  CostEstimator& isolated_;
  PartitionOverheads overheads_;
};

}  // namespace collage
