// Evaluation: plans run end to end, side by side, and the rule that decides
// which plan to keep.
//
// Compiles each plan, runs all of them on the same inputs, checks every
// plan's outputs against the first (the native reference), and times them
// interleaved (A B C A B C ...) so that machine drift hits all alike, each
// timed run after 20 ms of untimed runs of the same plan. Used by
// tuning (is the searched plan really faster than each single backend?) and
// comparing (the table).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collage/cost/measurer.h"
#include "collage/ir/graph.h"
#include "collage/ir/tensor.h"
#include "collage/plan/plan.h"
#include "collage/runtime/executor.h"
#include "collage/runtime/timing.h"

namespace collage {

// How long each plan runs untimed before its timed run in a round, so that
// it is timed as it runs back to back (runtime/interleaved_timing.h): a
// small model's plan took about 10 ms to settle after another plan.
inline constexpr double kPlanSettleSeconds = 0.02;

struct EvaluatedPlan {
  Plan plan;
  TimingResult timing;
  // Why the outputs differ from the reference plan's, if they do.
  std::optional<std::string> mismatch;
  // The strategy of an earlier plan with the same partitions (each on the
  // same backend): this plan was not run again, its timing is that plan's.
  // Empty when no earlier plan is the same.
  std::string same_as;
  // Timed again among the plans within kNearTie of the fastest
  // (time_near_ties_again); the timing pools both runs.
  bool timed_again = false;
};

// Runs `executor` (a plan of `graph`) on `inputs` and returns what the run is
// checked by: the model's outputs, by name. Where a runtime-shaped region
// (ir/runtime_shapes.h) defines outputs, as a detector's post-processing
// does, the values the region reads stand in for them ("read by the
// region: NAME"): every plan runs the region on the same native kernels,
// and a rounding difference in a score within tolerance can swap two
// near-equal detections or move one across a threshold.
std::map<std::string, Tensor> run_checked(const Graph& graph, Executor& executor,
                                          const std::map<std::string, Tensor>& inputs);

// Why the outputs `actual` differ from `expected` (one plan's against
// another's, by output name, within `tolerance`), if they do.
std::optional<std::string> outputs_differ(const std::map<std::string, Tensor>& actual,
                                          const std::map<std::string, Tensor>& expected,
                                          const PlanTolerance& tolerance);

// Each plan's label and timing, as a plan records them (Plan::verification).
std::vector<PlanStrategyTiming> strategy_timings(const std::vector<EvaluatedPlan>& evaluated);

// `plans[0]` is the reference for the output check. Plans with the same
// partitions are compiled and timed once: timed twice, the same plan would
// differ by the machine's noise, and a table would call one of them faster.
// Throws Error if a plan does not compile.
// With `between`, the rounds are split into `chunks` runs of rounds, and
// `between(chunk)` is called before each (0 .. chunks - 1), untimed: work
// to spread over the time the plans run (compare's timing of parts).
std::vector<EvaluatedPlan> evaluate_plans(const Graph& graph, const std::vector<Plan>& plans,
                                          int threads, int rounds, int warmup, int chunks = 1,
                                          const std::function<void(int)>& between = {});

// How close to the fastest plan's median a plan's must be for the choice
// between them to be timed again: two plans of one backend in its two
// layouts were within 2 % of each other in a tune's rounds and 7 % apart
// when timed side by side for longer (docs/partitioning.md, "Keeping the
// faster plan").
inline constexpr double kNearTie = 0.05;

// Times the plans whose medians lie within kNearTie of the fastest plan
// whose outputs match, among themselves, `rounds` rounds more, and pools
// those samples into their timings (and those of the plans that are the
// same as them). Nothing when fewer than two are that close.
void time_near_ties_again(const Graph& graph, std::vector<EvaluatedPlan>& evaluated, int threads,
                          int rounds);

// "single:onednn        12.345 ms", with "(outputs differ: why)" when they
// do and "(same plan as X)" when it is another strategy's plan.
std::string describe_evaluated(const EvaluatedPlan& evaluated);

// Which plan to keep after the searched plan ran beside the baselines.
struct KeptPlan {
  enum class Reason {
    // The searched plan was at least as fast as every baseline.
    kSearchedIsFastest,
    // A baseline measured faster in the same run.
    kBaselineFaster,
    // The searched plan's outputs differ from the reference.
    kSearchedMismatch,
  };
  // Indices into the evaluated plans.
  std::size_t kept = 0;
  std::size_t searched = 0;
  // The fastest baseline whose outputs match the reference.
  std::size_t best_baseline = 0;
  Reason reason = Reason::kSearchedIsFastest;
};

// The one keep-the-faster-plan rule of every front end: among `evaluated`,
// the baselines are `native` and the `single:` strategies (the first entry,
// the reference, is always a baseline), each in any compute layouts; the
// searched plan is the fastest `collage` entry whose outputs match (it may
// be there in several compute layouts). A baseline whose outputs differ
// from the reference never wins. The
// searched plan is kept unless its outputs differ or a baseline measured
// faster. Asserts that there is a collage entry.
KeptPlan keep_faster_plan(const std::vector<EvaluatedPlan>& evaluated);

// One line on which plan `kept` keeps and why, with the times that decided
// it: what `collage tune` prints and TuneResult::reason holds.
std::string describe_kept_plan(const KeptPlan& kept, const std::vector<EvaluatedPlan>& evaluated);

}  // namespace collage
