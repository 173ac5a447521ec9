// What every front end gives planning: the model, the backends, the
// threads, the measurement settings and the search's limits
// (PlanningOptions), validated the same way for all of them.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collage/backends/backend.h"
#include "collage/ir/graph.h"
#include "collage/ir/passes/canonicalize.h"
#include "collage/plan/plan_builder.h"
#include "collage/search/backend_spec.h"
#include "collage/search/placement.h"
#include "collage/search/strategy.h"
#include "collage/tuning.h"

namespace collage {

// What a long planning run reports while it works: the public API's
// TuneProgress (include/collage/tuning.h), so that every front end gets the
// same reports. The command line draws them as a progress bar.
using ProgressCallback = std::function<void(const TuneProgress&)>;

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
  // Measure through jobs in the PostgreSQL cache that `collage worker`
  // processes on other machines take (session/fleet.h; `--workers remote`).
  bool remote_workers = false;
  // With remote_workers: measure some of the jobs here too.
  bool measure_locally = true;
  // Keep only maximal candidates of each backend.
  bool prune = false;
  SearchSettings search;
  // The layout the search measures in (backends/search_layout.h), which
  // make_plan settles from search.layout; unset: each backend's own.
  std::optional<EdgeLayout> search_layout;
  // Where the user pins or keeps nodes off backends, and pattern rules of
  // their own (search/placement.h): every strategy honours them.
  Placement placement;
  // Timed runs per profile.
  int refine_runs = 10;
  // Seconds after which a fit of the kept plan's charges to its runs stops
  // at three profiles rather than five (Tuner::charges_of_kept_plan).
  double fit_seconds = 30;
  // When the graph planned is a control-flow body of the model (a plan's
  // PlanBody): the path to it from the model's graph, as (node name, index
  // in bodies(node)) pairs, outermost first. Measuring workers import the
  // model and follow it.
  std::vector<std::pair<std::string, std::size_t>> body_path;
  // Receives progress; may be empty.
  ProgressCallback progress;
};

// The named backends, native first, each once. Throws Error for a name this
// build does not have.
std::vector<const Backend*> resolve_backends(const std::vector<std::string>& names);

// The --backends value "native,onednn,xnnpack" as names; "all" is every backend of this build.
std::vector<std::string> parse_backend_list(const std::string& text);

// The machine fingerprint text for `threads`.
std::string machine_text(int threads);

// The limits of each backend's candidates under `settings`.
SpecOptions spec_options(const SearchSettings& settings);

// The spec of each of `backends` under the search's limits and the
// placement's constraints.
std::vector<PartitionSpecPtr> planning_specs(const std::vector<const Backend*>& backends,
                                             const PlanningOptions& options);

// Throws Error, before anything is measured, when options.placement cannot
// be honoured on `graph` with the run's backends (Placement::check).
void check_placement(const Graph& graph, const PlanningOptions& options);

// What a plan of `strategy` made with `options` records of how it was made.
PlanContext plan_context(const Strategy& strategy, const PlanningOptions& options);

}  // namespace collage
