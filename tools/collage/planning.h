// Planning: one place that turns a model and a strategy into a Plan.
//
// `run`, `tune` and `compare` all go through make_plan(), so every strategy
// sees the same canonical graph, the same backend specs and the same
// measurement settings, and their plans are comparable. For the collage
// strategy this is the tuning run: candidates, measurements (in a worker
// process, through the persistent cache), search, coalescing.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "collage/backends/backend.h"
#include "collage/ir/graph.h"
#include "collage/ir/passes/canonicalize.h"
#include "collage/plan/plan.h"
#include "collage/search/backend_spec.h"
#include "collage/search/strategy.h"

namespace collage::cli {

struct PlanningOptions {
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
  // Keep only maximal candidates of each backend.
  bool prune = false;
  bool show_progress = true;
  SpecOptions specs;
  // Rounds of search -> profile the plan in context -> charge each backend's
  // observed per-partition overhead -> search again. 0: search once with the
  // overheads stored for this machine, without profiling.
  int refine_rounds = 3;
  // Timed runs per profile.
  int refine_runs = 10;
  // Refinement starts no new round after this many seconds of it.
  double refine_budget_seconds = 120;
};

// The search's flags, shared by `tune` and `compare`.
struct SearchFlags {
  int refine_rounds = 3;
  double budget_seconds = 120;
  int max_depth = 6;
  int max_exits = 1;
};
void add_search_flags(CLI::App& command, SearchFlags& flags);
// Validates the flags (Error naming the flag) and puts them into `options`.
void apply_search_flags(const SearchFlags& flags, PlanningOptions& options);

// The named backends, native first, each once. Throws Error for a name this
// build does not have.
std::vector<const Backend*> resolve_backends(const std::vector<std::string>& names);

// Builds `strategy`'s plan for `graph` (the canonical graph of options.model_path).
// For the collage strategy the plan's measured_ms is its in-context median.
Plan make_plan(const Graph& graph, const Strategy& strategy, const PlanningOptions& options);

// The --backends value "native,onednn,xnnpack" as names; "all" is every backend of this build.
std::vector<std::string> parse_backend_list(const std::string& text);

// The machine fingerprint text for `threads`.
std::string machine_text(int threads);

// Default thread count: every core.
int default_threads();

}  // namespace collage::cli
