// Tuning and comparing: the two long jobs every front end offers, as
// functions that return their results as data.
//
// tune_model() searches for the fastest plan and, unless told not to, runs
// it end to end beside every single-backend baseline and keeps the faster
// (keep_faster_plan). compare_strategies() builds native, each single
// backend, greedy placement and the collage search, and runs them side by
// side. The command line prints what they return; the C++ API and the Python
// module hand it to the caller.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collage/ir/graph.h"
#include "collage/plan/plan.h"
#include "collage/session/evaluation.h"
#include "collage/session/planning.h"

namespace collage {

// The layout the search measures in (backends/search_layout.h), from
// options.search.layout: "own" none; a layout's name that layout; "auto"
// the layout of the fastest of each multi-layout backend's single plan
// timed in each of its layouts (none when its own is fastest); "each" (see
// search_layouts) none. options.search_layout, when set, stands.
std::optional<EdgeLayout> choose_search_layout(const Graph& graph, const PlanningOptions& options);

// The layouts the search measures in, one search each: with
// options.search.layout "each", each backend's own (none) and then every
// layout one of options.backends computes in (Backend::compute_layouts);
// otherwise choose_search_layout's one.
std::vector<std::optional<EdgeLayout>> search_layouts(const Graph& graph,
                                                      const PlanningOptions& options);

struct TuneSettings {
  // Run the searched plan beside the baselines and keep the faster.
  bool verify = true;
  // Interleaved end-to-end runs per plan when verifying.
  int repeat = 10;
};

struct TuneOutcome {
  // The plan the search found, before any fallback.
  Plan searched;
  // The plan to save and deploy: the searched plan, or the faster baseline.
  Plan kept;
  // Each plan run end to end (baselines, then the searched plan); empty
  // when not verified.
  std::vector<EvaluatedPlan> evaluated;
  // Which plan was kept and why; unset when not verified.
  std::optional<KeptPlan> decision;
};

// Throws Error for bad settings, a backend this build lacks, or a plan that
// does not compile.
TuneOutcome tune_model(const Graph& graph, const PlanningOptions& options,
                       const TuneSettings& settings);

struct CompareOutcome {
  // native, single:<b> for each backend, greedy (when there are two or more
  // backends besides native), collage; in that order.
  std::vector<EvaluatedPlan> results;
  KeptPlan decision;
};

// `repeat` interleaved rounds, one run of each strategy per round. With a
// measurement cache, the collage plan's estimate sums its partitions timed
// again in between the rounds (PartsRetimer); the search's own is in its
// PlanSearchStats::search_estimated_ms.
CompareOutcome compare_strategies(const Graph& graph, const PlanningOptions& options, int repeat);

}  // namespace collage
