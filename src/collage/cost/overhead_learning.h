// Overhead learning: the per-partition charges of InContextEstimator
// (PartitionOverheads), learned from profiles of whole plans.
//
// A profile of a plan (plan/plan_profile.h) puts each partition's time in
// context beside its estimate. What a partition took beyond its isolated
// measurement, less the machine running faster or slower than when it was
// measured, is the cost of being one partition among others: the executor's
// hand-off, a thread pool another library left idle. These functions read
// that excess per backend from one profile, fit it to one plan's run, and
// settle it over a model's profiles.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collage/cost/in_context_estimator.h"

namespace collage {

// One partition of a profiled plan, as overhead learning reads it.
struct PartitionRun {
  std::string backend;
  // The backend of the partition that ran just before ("" for the first).
  std::string previous_backend;
  // The partition's estimate, with the charges it was searched with.
  std::optional<double> estimated_ms;
  // Its kernel's time in the plan's runs.
  double in_context_ms = 0;
};

// A profiled plan, as overhead learning reads it.
struct PlanRun {
  // End to end, the median over runs.
  double run_ms = 0;
  // Per run, what the executor spent beyond the partitions' times
  // (allocation, between kernels, the kernels' run-to-run variation).
  double beyond_partitions_ms = 0;
  std::vector<PartitionRun> partitions;
};

// When the estimates of a profiled plan's parts were timed: by the search
// (another moment, at another speed of the machine) or again right beside
// the profile's runs (session/parts_retiming.h).
enum class PartsTimed { kWhenSearched, kWithProfile };

// What one profile shows, per backend with a partition in the plan (the
// others are not listed): the median over the backend's partitions of
// (in context - scale x isolated), plus an equal share of the executor's
// time beyond the partitions, at least 0 and at most the run's end to end
// over the backend's partition count (when the run's time is known). The
// plan's estimates were made with `charged` added; it is taken off to get
// the isolated cost.
//
// With `parts` kWhenSearched, the estimates are the search's measurements,
// taken at another moment: `scale` is how fast the machine ran the plan
// against then, the median of in context / isolated over the partitions of
// 0.2 ms and more, within [0.5, 2]. A machine that runs everything 30%
// slower for a while is not a per-partition overhead: learned as one, it
// was charged to every partition of every later plan, small ones most.
// With fewer than three partitions that large the speed is unknown, and
// only the partitions under 0.2 ms count (at a scale of 1); a backend left
// without one is not listed.
//
// With `parts` kWithProfile, the estimates are of parts timed again right
// after the profile's runs, at the machine's speed of the runs: with fewer
// than three large partitions the scale is taken as 1, and every partition
// counts, large or small.
PartitionOverheads observed_overheads(const PlanRun& run, const PartitionOverheads& charged,
                                      PartsTimed parts = PartsTimed::kWhenSearched);

// The overheads that make `run`'s own plan cost what it ran: each backend's
// observed overhead (observed_overheads, parts timed with the profile), all
// scaled by one factor so that the plan's partitions (their estimates less
// `charged`) plus the charges sum to the run's end to end. The
// per-partition medians tell how the excess splits over the backends; the
// total tells how much there is. Charged to a plan of other partitions,
// medians taken on a plan of few large partitions (mobilenet v2's 15, 28.7
// us per oneDNN partition) overcharged the 60 small ones of the plan kept
// by 0.9 ms, 25% of its run. A plan that runs faster than its parts gets no
// charges; one that runs slower while the medians leave every backend at 0
// shares the excess equally over its partitions.
PartitionOverheads overheads_fitting_the_run(const PlanRun& run, const PartitionOverheads& charged);

// The overheads of one model's tune from what each of its profiles
// observed (observed_overheads, one entry per profile): per backend of
// `backends`, the median over the profiles whose plan used it; 0 for a
// backend none used. One profile taken while the machine changed speed
// (its runs slow, its parts timed fast a moment later) reads a charge
// several times too high, and the next plans would pay it on every
// partition; the median over profiles leaves it out once there are three.
PartitionOverheads overheads_over_rounds(const std::vector<PartitionOverheads>& rounds,
                                         const std::vector<std::string>& backends);

}  // namespace collage
