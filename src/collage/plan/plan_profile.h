// PlanProfile: where a plan's time goes when it runs, next to what the
// search estimated.
//
// The search adds the costs of candidates timed alone. A profile takes the
// spans of real runs of the plan (runtime/trace.h) and puts, per partition,
// its in-context time beside its estimate, and totals the work done at
// the boundaries (layout conversions, staging copies, allocations, the
// executor between kernels). Gaps are also grouped by the backend that ran
// just before, so the cost of switching from one backend to another (a
// thread pool to wake, caches another library left cold) is visible as its
// own line.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collage/backends/registry.h"
#include "collage/cost/overhead_learning.h"
#include "collage/ir/graph.h"
#include "collage/plan/plan.h"
#include "collage/runtime/trace.h"

namespace collage {

struct PartitionProfile {
  int index = 0;
  std::string backend;
  // The backend of the partition that ran just before ("" for the first).
  std::string previous_backend;
  std::string ops;
  std::optional<double> estimated_ms;
  // The partition's kernel as the executor called it: the trimmed mean over
  // runs (runtime/timing.h), the statistic its estimate is made of.
  double in_context_ms = 0;
  // Median per run of the layout conversions and copies inside the kernel.
  double layout_ms = 0;
  double copy_ms = 0;
  // in_context - estimate, when there is an estimate.
  std::optional<double> gap_ms() const {
    if (!estimated_ms) return std::nullopt;
    return in_context_ms - *estimated_ms;
  }
};

// Time per run spent on one kind of boundary work.
struct BoundaryTotal {
  std::string kind;
  double ms_per_run = 0;
  // How many spans of this kind a run has (0 where it is derived).
  int count_per_run = 0;
};

struct PlanProfile {
  int runs = 0;
  // End to end, the median over runs: of runs timed without tracing once
  // leave_out_tracing() has been applied, else of the traced runs.
  double run_median_ms = 0;
  // The traced runs' median, once leave_out_tracing() has been applied.
  std::optional<double> traced_run_median_ms;
  std::optional<double> estimated_ms;
  // Sum over partitions of their in-context times.
  double partitions_ms = 0;
  std::vector<PartitionProfile> partitions;
  std::vector<BoundaryTotal> boundaries;
};

// Builds the profile of `plan` from the spans of its runs. Spans of runs
// before `first_run` (warm-up) are ignored.
PlanProfile profile_plan(const Plan& plan, const std::vector<TraceSpan>& spans, int first_run = 0);

// Takes the profiler's own cost out of `profile`, built from traced runs.
// Recording a partition's span (its name, ops and times) costs a few
// microseconds after every kernel, which lands between kernels: a plan of
// 50 partitions ran 0.14 ms (20%) slower traced. Learned as a per-partition
// overhead, it was charged to plans that run untraced. `untraced_ms` is the
// median of runs of the same plan timed without tracing, taken beside the
// traced ones. The end to end becomes that median, the time between
// kernels what it leaves beyond the kernels and allocations, and the
// difference is its own line ("tracing (left out)").
//
// With the kernels' sums of those runs, the time between kernels is what
// the untraced runs themselves spent outside their kernels, and the rest
// of what the median leaves beyond the partitions' typical times is its
// own line ("kernels' run-to-run variation"). A partition's time varies
// from run to run, more often up than down, and the median run holds its
// kernels' sum, not the sum of each kernel's typical time: EfficientNet-B0's
// 116 partitions summed to 7.08 ms by their medians, while its runs' kernels
// summed to 7.66 ms (median over runs) and the executor spent 0.12 ms
// between them. Without the sums, both fall between kernels.
struct UntracedRuns {
  // Each untraced run's end to end, ms.
  std::vector<double> run_ms;
  // Each one's time inside kernels (Executor::last_kernel_seconds), ms;
  // empty where it was not taken.
  std::vector<double> kernels_ms;
};
void leave_out_tracing(PlanProfile& profile, const UntracedRuns& untraced);
void leave_out_tracing(PlanProfile& profile, double untraced_ms);

// The boundary lines that are time the executor's runs spend beyond the
// partitions' in-context times: allocation, between kernels and the
// kernels' run-to-run variation.
bool is_beyond_partitions(const BoundaryTotal& total);

// The text summary: totals, boundary kinds, the `top` largest gaps, and a
// line per partition.
std::string profile_to_text(const PlanProfile& profile, int top = 10);

// Puts each partition's in-context time into `plan` as its measured_ms.
void annotate_plan(Plan& plan, const PlanProfile& profile);

// Compiles `plan`, runs it `warmup` times, then `runs` times timed without
// tracing, each followed by a run with, and profiles the traced runs with
// the tracing left out (leave_out_tracing). Throws Error when the plan does not
// compile.
PlanProfile profile_in_context(const Graph& model, const Plan& plan,
                               const BackendRegistry& registry, int threads,
                               const std::map<std::string, Tensor>& inputs, int runs, int warmup);

// The profile as overhead learning reads it (cost/overhead_learning.h):
// each partition's backend, estimate and in-context time, the end to end,
// and the executor's time beyond the partitions (is_beyond_partitions).
PlanRun as_plan_run(const PlanProfile& profile);

}  // namespace collage
