// Tuner: the collage strategy's tuning run, the pipeline that turns a
// model's canonical graph into its plan on this machine.
//
//   1. learned state: the per-partition overheads this machine (and this
//      model, when it was tuned before) taught earlier tunes;
//   2. search: every backend's candidates, measured (a worker process,
//      the measurement cache), and the cheapest cover with those
//      overheads charged (search/collage_partitioner.h);
//   3. refinement rounds: profile the plan in context, retime its parts
//      beside the profile, learn the overheads it shows, search again,
//      until the plan stops changing, the rounds run out or half the
//      budget is spent; the best plan by its runs is kept;
//   4. local moves: improve the kept plan by moves measured end to end
//      (session/move_refinement.h), from the searched cover or a faster
//      baseline's, within the budget;
//   5. the kept plan settled: its parts retimed (a model tuned before),
//      its estimate made again when measurements changed, the charges
//      that make it cost what it runs fitted to five profiles;
//   6. learned state stored: the overheads, and the cover the moves kept,
//      so that tuning the model again finds the same plan without
//      profiling (step 3 is skipped, step 4 replays the kept cover).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collage/cost/boundary_costs.h"
#include "collage/cost/in_context_estimator.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/plan/plan.h"
#include "collage/plan/plan_profile.h"
#include "collage/search/collage_partitioner.h"
#include "collage/session/measuring.h"
#include "collage/session/move_refinement.h"
#include "collage/session/planning_options.h"

namespace collage {

class Tuner {
 public:
  // `graph` is the canonical graph of options.model_path and `dfg` its
  // index; both outlive the tuner.
  Tuner(const Graph& graph, const DataflowGraph& dfg, const Strategy& strategy,
        const PlanningOptions& options);
  Tuner(const Tuner&) = delete;
  Tuner& operator=(const Tuner&) = delete;

  // Runs the pipeline; the plan's measured_ms is its in-context time.
  Plan run();

  // `plan`, a plan of this model, with the estimate this tuner's search
  // makes of its cover: each partition measured alone in the tuner's
  // layout (those found in the cache timed again when the model was tuned
  // before, as its searched plan's parts are), with the overheads this
  // model's profiles taught (this machine's when it has none) and the
  // conversions at its boundaries charged. None when a partition is not
  // one of the search's backends' or is invalid alone. The plan is not
  // searched or changed otherwise.
  std::optional<Plan> estimate(const Plan& plan);

  // `plan` estimated as estimate() does, with the charges fitted to five
  // profiles of it in context (as the kept plan's are, step 5) in place of
  // those learned before, and kept for this model in this tuner's layout.
  // None as estimate()'s.
  std::optional<Plan> estimate_fitted(const Plan& plan);

 private:
  // The best plan so far, with what it was made of.
  struct Best {
    Plan plan;
    // Its cover (costs aside).
    std::vector<ChosenPartition> partitions;
    // The overheads it was searched with.
    PartitionOverheads overheads;
    // Its search's result: where local moves start.
    CollageResult result;
  };

  // Step 1.
  void load_learned_state();
  // Step 2: one search with the overheads of now; round 0 reports its
  // candidates' progress.
  CollageResult search(int round);
  // The plan of a search that is not refined further: the cover a model
  // tuned before kept by local moves, or the searched plan; none when
  // local moves are still to be made (the plan becomes the best).
  std::optional<Plan> plan_without_refining(const Plan& plan, const CollageResult& result);
  // The cover local moves kept for this model, replayed; none when none is
  // stored or it no longer fits.
  std::optional<Plan> replay_kept_moves(const CollageResult& result);
  // Step 3: profiles `plan` (round `round`), keeps it when it is the best,
  // and learns the overheads it shows.
  void profile_round(int round, Plan plan, const CollageResult& result);
  void report_round(int round, const Plan& plan, const PlanProfile& profile,
                    const std::optional<Plan>& retimed);
  // Step 4.
  void refine_by_local_moves();
  std::vector<MoveStart> move_starts(InContextEstimator& in_context);
  // Whether candidates are screened (SearchSettings::screen; never on a
  // fleet).
  bool screening() const;
  // `plan`'s partitions as this tuner's search makes them, with their
  // costs alone and the boundary charges; none as estimate()'s.
  std::optional<std::vector<ChosenPartition>> cover_of(const Plan& plan);
  // `plan` with the costs of `cover`, its partitions in its order.
  static Plan with_costs_of(Plan plan, const std::vector<ChosenPartition>& cover);
  // Step 5.
  void settle_kept_plan();
  // The charges that make the kept plan cost what it runs; none when it
  // cannot be profiled (reported) or its parts cannot be retimed.
  std::optional<PartitionOverheads> charges_of_kept_plan();
  // Step 6.
  void store_learned_state();

  // The plan of a cover (boundary charges included) found by `result`'s search.
  Plan plan_of(const std::vector<ChosenPartition>& partitions, const CollageResult& result) const;
  // The plan of a cover with each part's cost alone (as measured now) and
  // the boundary charges.
  Plan plan_costed_alone(const std::vector<ChosenPartition>& partitions,
                         const CollageResult& result, const PartitionOverheads& overheads);
  // Whether more than `share` of the budget was spent since the first profile.
  bool over(double share) const;
  void report(const std::string& line) const;

  const Graph& graph_;
  const DataflowGraph& dfg_;
  const Strategy& strategy_;
  const PlanningOptions& options_;
  // The backends the search wraps to measure in its layout (backends/search_layout.h).
  std::vector<std::unique_ptr<Backend>> in_layout_;
  // The backends as the search measures them.
  std::vector<const Backend*> backends_;
  std::vector<PartitionSpecPtr> specs_;
  std::vector<std::string> backend_names_;
  Measuring measuring_;
  // model_key(): the key of what this model's tunes learned.
  std::string model_;
  // The key of the charges fitted to this model's plans in the tuner's
  // layout: model_, and the layout when it is not each backend's own (a
  // plan computing in nChw16c pays other conversions than in its own).
  std::string fitted_model_;
  // local_moves_key(): where the cover local moves kept is stored.
  std::string moves_key_;
  // Charged while searching.
  PartitionOverheads overheads_;
  // Learned last (this model's own profiles when it was profiled): the
  // plan's estimate is made with these.
  PartitionOverheads learned_;
  int refine_rounds_ = 0;
  // True when this model was tuned before (its overheads are stored).
  bool known_model_ = false;
  std::map<std::string, Tensor> inputs_;
  // Layout conversions at boundaries, measured once per machine and shape.
  ConversionCosts conversions_;
  LayoutBoundaryCosts boundaries_;
  BoundaryCosts* boundaries_or_null_ = nullptr;
  std::optional<Best> best_;
  std::string previous_signature_;
  // What each profile of this model showed (observed_overheads).
  std::vector<PartitionOverheads> observations_;
  double search_seconds_ = 0;
  // The budget counts from the first profile: measuring the candidates is
  // not refinement.
  std::optional<std::chrono::steady_clock::time_point> refine_start_;
};

}  // namespace collage
