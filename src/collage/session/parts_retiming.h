// Retiming a plan's parts: timing the partitions of a collage plan again,
// one at a time, the way the search measured them (the worker, the
// backend's edge layouts, the eviction).
//
// The machine's speed moves by a third and more within minutes, and by 2x
// within seconds (docs/partitioning.md, "Re-timing a plan's parts"), and a cached measurement may
// be days old. An estimate that is compared with runs (a tune's profiles, `compare`) sums parts
// retimed beside those runs, so that what the runs show beyond it is the plan's overhead, not the
// machine's change of speed. Every function here retimes through MeasuringEstimator::retime(); what
// each keeps of the new times is said with it.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "collage/cost/measuring_estimator.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/plan/plan.h"
#include "collage/plan/plan_profile.h"
#include "collage/search/shortest_path.h"
#include "collage/session/planning_options.h"

namespace collage {

// How much longer (ms; negative: shorter) `candidate` takes retimed now
// than the measurement the search used; the new time is not kept. None
// when either is not valid, or the candidate is not a backend's.
std::optional<double> retimed_change_ms(MeasuringEstimator& estimator, const DataflowGraph& dfg,
                                        const CandidatePartition& candidate);

// `plan`, made of `cover` (in its order), with each partition's isolated
// time retimed now in place of the one the search used (not kept); the
// searched estimate is kept in plan.search.search_estimated_ms. Charges on
// top of the isolated times (overheads, conversions at boundaries) stay as
// they were. A plan whose partitions do not all have an estimate is
// returned as it is.
Plan with_parts_retimed(const Plan& plan, const DataflowGraph& dfg,
                        const std::vector<ChosenPartition>& cover, MeasuringEstimator& estimator);

// Puts into `profile` the estimates of `retimed`, its plan with its parts
// retimed (with_parts_retimed).
void put_retimed_estimates(PlanProfile& profile, const Plan& retimed);

// Retimes the parts of `plan` (made of `cover`) and puts their estimates
// into `profile` (put_retimed_estimates). Returns the plan so retimed; none
// (and `profile` as it was) when its parts could not be retimed.
std::optional<Plan> retime_into_profile(PlanProfile& profile, const Plan& plan,
                                        const DataflowGraph& dfg,
                                        const std::vector<ChosenPartition>& cover,
                                        MeasuringEstimator& estimator);

// What a partition estimated at `estimate_ms` took beyond it (ms) over
// the times it was retimed (`changes`, not empty): their mean, or the
// smallest when one took its part 1.5 times as long as another, a burst of
// samples that a stall of the machine held (interference only adds time).
double settled_retiming(double estimate_ms, const std::vector<double>& changes);

// `plan` with each partition's estimate moved by what its two retimings,
// `before` and `after` (with_parts_retimed), settle on (settled_retiming).
Plan with_retimings_settled(const Plan& plan, const Plan& before, const Plan& after);

// A measurement a profile contradicts: more than this many times the
// partition's in-context time, and kMinContradictionMs above it. Timed in
// the caches a plan leaves, a candidate alone ran within 6% of its median
// in context (docs/partitioning.md, "Measurement"); beyond a quarter more, the
// measurement was taken while the machine was slow.
constexpr double kContradictionRatio = 1.25;
constexpr double kMinContradictionMs = 0.005;

// Retimes each partition of `chosen` (the cover `profile` ran, in the same
// order) whose isolated measurement its in-context time contradicts,
// keeping the faster measurement; returns how many.
int retime_contradicted(const DataflowGraph& dfg, const std::vector<ChosenPartition>& chosen,
                        const PlanProfile& profile, MeasuringEstimator& estimator);

// How many times retime_parts_kept() times each part, a pass over the plan
// apart.
constexpr int kPartTimings = 2;

// Retimes each part of `cover`, the plan of a model tuned before, keeping
// the new measurements in place of those of the earlier run, so that the
// plan's estimate describes the machine as it runs now: the cache held
// resnet50's parts from a slow spell, 25% over what the plan ran at hours
// later, and resnet18's from a fast one, 12% under. Each part is timed
// kPartTimings times, a pass over the whole plan apart, and keeps the
// faster: a slow spell of a few seconds holds one of its timings, not all
// (one timing each put yolo_tiny's estimate 31% over its runs, and its
// parts timed again between those runs within 2%), and interference only
// adds time. The plan stays as found. A measurement that fails leaves the
// one before; the failure is reported to `progress`.
void retime_parts_kept(const DataflowGraph& dfg, const std::vector<ChosenPartition>& cover,
                       MeasuringEstimator& estimator, const ProgressCallback& progress);

// The candidates `plan`'s partitions are, as `specs` (the search's) make
// them, in the plan's order: none for a partition whose backend `specs`
// do not have or whose nodes `dfg` does not.
std::vector<std::optional<CandidatePartition>> plan_candidates(
    const DataflowGraph& dfg, const std::vector<PartitionSpecPtr>& specs, const Plan& plan);

// Retimes the partitions of a collage plan made before, in another run
// (`compare` retimes the parts in between its runs); the new times are not
// kept.
class PartsRetimer {
 public:
  // `plan` is the collage plan of `graph` made with `options`.
  PartsRetimer(const Graph& graph, const Plan& plan, const PlanningOptions& options);
  ~PartsRetimer();
  PartsRetimer(const PartsRetimer&) = delete;
  PartsRetimer& operator=(const PartsRetimer&) = delete;

  // The plan's partitions.
  std::size_t size() const;
  // Retimes partition `index`: how much longer (ms; negative: shorter) it
  // took now than the measurement the search used. None when either is
  // not a valid measurement or the partition is not a backend's.
  std::optional<double> retime(std::size_t index);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace collage
