// Planning: one place that turns a model and a strategy into a Plan.
//
// Every front end (the command line, the C++ API, the Python module) goes
// through make_plan(), so every strategy sees the same canonical graph, the
// same backend specs and the same measurement settings, and their plans are
// comparable. For the collage strategy this is the tuning run: candidates,
// measurements (in a worker process, through the persistent cache), search,
// coalescing, and refinement by profiling the plan in context.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collage/backends/backend.h"
#include "collage/ir/graph.h"
#include "collage/ir/passes/canonicalize.h"
#include "collage/plan/plan.h"
#include "collage/search/backend_spec.h"
#include "collage/search/strategy.h"
#include "collage/tuning.h"

namespace collage {

// What a long planning run reports while it works: the public API's
// TuneProgress (include/collage/tuning.h), so that every front end gets the
// same reports. The command line draws them as a progress bar.
using ProgressCallback = std::function<void(const TuneProgress&)>;

// The limits of the search; every front end validates them with
// check_search_settings(), so a value one refuses, all refuse.
struct SearchSettings {
  // Rounds of: profile the plan in context, charge each backend's observed
  // per-partition overhead, search again. 0: search once with the overheads
  // stored for this machine, without profiling.
  int refine_rounds = 3;
  // Refinement (re-search rounds, then local moves) starts nothing new
  // after this many seconds of it.
  double budget_seconds = 120;
  // Longest path inside a graph-runtime or fusing-compiler candidate.
  int max_depth = 6;
  // Most outputs of a graph-runtime or fusing-compiler candidate.
  int max_exits = 1;
  // Charge the layout conversions at boundaries between partitions on the
  // search's edges (cost/boundary_costs.h).
  bool boundary_costs = true;
  // After the rounds, improve the plan by local moves measured end to end
  // (session/move_refinement.h), within the budget.
  bool local_moves = true;
};

// Throws Error naming the flag (--refine-rounds, --budget, --max-depth,
// --max-exits) of a value out of range.
void check_search_settings(const SearchSettings& settings);

struct PlanningOptions {
  // The model file; measuring workers import it again.
  std::string model_path;
  std::map<std::string, Shape> input_shapes;
  // The level the graph was canonicalized with (workers import it the same way).
  GraphOptLevel graph_opt = GraphOptLevel::kAll;
  // Backends the collage strategy may use; native is always added.
  std::vector<std::string> backends;
  int threads = 1;
  // Measurement cache file; empty: the default; "none": no persistent cache.
  std::string cache_path;
  // Measure in a worker process (crash and hang isolation).
  bool isolate = true;
  // The `collage` executable whose `worker` subcommand measures; empty: found
  // by worker_executable().
  std::string worker_executable;
  // Keep only maximal candidates of each backend.
  bool prune = false;
  SearchSettings search;
  // Timed runs per profile.
  int refine_runs = 10;
  // Receives progress; may be empty.
  ProgressCallback progress;
};

// The `collage` executable that serves measurements: $COLLAGE_WORKER when
// set; this process when it is `collage`; else `collage` beside the library
// holding this code or in ../bin of it (an installed tree); else the one this
// build made. Throws Error when none exists.
std::string worker_executable();

// The named backends, native first, each once. Throws Error for a name this
// build does not have.
std::vector<const Backend*> resolve_backends(const std::vector<std::string>& names);

// Builds `strategy`'s plan for `graph` (the canonical graph of options.model_path).
// For the collage strategy the plan's measured_ms is its in-context time.
Plan make_plan(const Graph& graph, const Strategy& strategy, const PlanningOptions& options);

// Times the partitions of a collage plan again, one at a time, the way the
// search measured them (the worker, the backend's edge layouts, the
// eviction); the new times are not kept. The machine's speed moves by a
// third and more within minutes, and by 2x within seconds (docs/
// partitioning.md, "Costs in context", points 6 and 12), and a cached
// measurement may be days old: `compare` times the parts in between its
// runs, so that the estimate it checks against them sums parts timed at
// the runs' speed.
class PartsTimer {
 public:
  // `plan` is the collage plan of `graph` made with `options`.
  PartsTimer(const Graph& graph, const Plan& plan, const PlanningOptions& options);
  ~PartsTimer();
  PartsTimer(const PartsTimer&) = delete;
  PartsTimer& operator=(const PartsTimer&) = delete;

  // The plan's partitions.
  std::size_t size() const;
  // Times partition `index` again: how much longer (ms; negative: shorter)
  // it took now than the measurement the search used. None when either is
  // not a valid measurement or the partition is not a backend's.
  std::optional<double> change_now(std::size_t index);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// What a partition estimated at `estimate_ms` took beyond it (ms) over
// the times it was timed again (`changes`, not empty): their mean, or the
// smallest when one took its part 1.5 times as long as another, a burst of
// samples that a stall of the machine held (interference only adds time).
double settled_change(double estimate_ms, const std::vector<double>& changes);

// The --backends value "native,onednn,xnnpack" as names; "all" is every backend of this build.
std::vector<std::string> parse_backend_list(const std::string& text);

// The machine fingerprint text for `threads`.
std::string machine_text(int threads);

}  // namespace collage
