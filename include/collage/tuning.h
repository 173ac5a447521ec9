// collage::tune and collage::compare: the search and the side-by-side
// comparison as functions that return their results as data.
//
//   collage::TuneResult result = collage::tune("model.onnx", {.threads = 2});
//   result.save("model.plan.json");
//   collage::Session session("model.onnx", {.plan_json = result.plan_json});
//
// Both measure candidates in a `collage worker` process (so a backend that
// crashes costs one candidate, not the run), found beside libcollage or in
// ../bin of it, or named by $COLLAGE_WORKER; `isolate = false` measures in
// this process instead. Measurements are cached as for the command line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace collage {

// What a long run reports while it works.
struct TuneProgress {
  enum class Stage {
    kCandidates,  // candidates estimated (measured or found in the cache): done of total;
                  // with screening (SearchSettings::screen), candidates run (screened or
                  // timed in full) of all, most of which never run, and a message with
                  // the counts
    kRefine,      // one refinement round: the plan profiled in context (message)
    kVerify,      // one plan run end to end beside the others (message)
    kCompile,     // a backend compiles candidates' kernels ahead of measuring them: a line
                  // before and after (message; total 0), and done of total as each is
    kJobs,    // measurement jobs on a fleet: done of total; queued, running, per worker (message)
    kBody,    // a control-flow body planned as a graph of its own: a line before and after
              // (message)
    kLayout,  // the layout the search measures in (SearchSettings::layout): a line before
              // the single-backend plans are timed in each layout and one with the choice
              // (message)
  };
  Stage stage = Stage::kCandidates;
  std::size_t done = 0;
  std::size_t total = 0;
  int measured = 0;
  int cache_hits = 0;
  int invalid = 0;
  // True on the last report of a stage.
  bool finished = false;
  std::string message;
};

// The limits of the search (as `collage tune --help` describes them). The
// command line, this API and the Python module take the same fields and
// validate them the same way, so a value one refuses, all refuse.
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
  // search's edges (docs/partitioning.md, "Costs in context").
  bool boundary_costs = true;
  // After the rounds, improve the plan by local moves measured end to end
  // (docs/partitioning.md, "Local moves"), within the budget.
  bool local_moves = true;
  // Screen candidates with a short first timing, rule out without running
  // those whose lower bound already loses, and time in full only those
  // that can still enter the cheapest cover (docs/partitioning.md,
  // "Screening"): a cold tune of the zoo timed 0.28x as many candidates in
  // full, and its plans ran within 3 % of those of tunes that time every
  // candidate in full (false). Measuring through remote workers times in
  // full.
  bool screen = true;
  // The layout the search measures a backend that computes in several in
  // (docs/partitioning.md, "The search's layout"): "each", a search in
  // each backend's own layout and one in each other layout a backend
  // computes in, every searched plan then run beside the baselines (a
  // single search where no backend computes in another layout); "own",
  // each backend's own layout; "auto" first times each such backend's
  // single-backend plan in each of its layouts and searches in the
  // fastest; or a layout's name ("blocked-16", "blocked-8",
  // "channels-last").
  std::string layout = "each";
};

struct TuneOptions {
  // Backends the search may use; empty: every backend of this build. Native
  // is always included. For compare(), also greedy placement's priority order.
  std::vector<std::string> backends;
  // Threads for every backend; 0: every core.
  int threads = 0;
  std::map<std::string, std::vector<std::int64_t>> input_shapes;
  // Graph optimizations: "none", "basic" or "all".
  std::string graph_opt = "all";
  // Measurement cache file; empty: the default (as `collage tune`); "none": no cache.
  std::string cache_path;
  // Measure candidates in a worker process.
  bool isolate = true;
  // Measure through jobs in the PostgreSQL cache (cache_path or
  // $COLLAGE_CACHE_URL) that `collage worker` processes on machines of this
  // class take (docs/fleet.md), as `collage tune --workers remote`.
  bool remote_workers = false;
  // With remote_workers: measure some of the jobs in this process's
  // workers too (false: `--no-local-measure`).
  bool measure_locally = true;
  // Keep only maximal candidates of each backend.
  bool prune = false;
  // The search's limits.
  SearchSettings search;
  // Placement constraints (docs/placement.md), as the command line's
  // --place, --avoid and --patterns write them: pins "Conv_12=onednn",
  // "op:Softmax=native"; avoids "xnnpack:op:Softmax"; a JSON file of
  // pattern rules of one's own. Every plan tune() and compare() build
  // honours them; a pin that cannot be honoured is an Error before anything
  // is measured.
  std::vector<std::string> place;
  std::vector<std::string> avoid;
  std::string patterns_file;
  // tune(): run the searched plan beside each single backend and keep the faster.
  bool verify = true;
  // End-to-end runs per plan (tune's verification, compare's rounds).
  int repeat = 10;
  // Refuse a model whose tensors need more bytes than this; empty: 3/4 of memory.
  std::string max_memory;
  // Receives progress; called on the calling thread.
  std::function<void(const TuneProgress&)> progress;
};

// One plan measured end to end.
struct StrategyResult {
  std::string strategy;
  int partitions = 0;
  double median_ms = 0;
  double p10_ms = 0;
  double p90_ms = 0;
  // The plan's estimate (collage only): the sum of its partitions' costs.
  // In compare(), the partitions are timed again just before the runs.
  std::optional<double> estimated_ms;
  // Why its outputs differ from native's; empty when they match.
  std::string mismatch;
  // The strategy of an earlier row with the same partitions, whose timing
  // this row shares (the plan ran once); empty when none.
  std::string same_as;
};

struct SearchSummary {
  int candidates = 0;
  // Timed in full in this run.
  int measured = 0;
  int cache_hits = 0;
  int invalid = 0;
  double seconds = 0;
  // Local moves measured end to end after the search, and those kept.
  int moves_tried = 0;
  int moves_kept = 0;
  // The cover the moves started from: "searched", or "single:<backend>"
  // when that backend's cover ran faster than the searched one.
  std::string moves_start;
  // With screening: candidates screened (timed briefly) in this run, and
  // candidates the search ruled out by their bound without running them.
  int screened = 0;
  int ruled_out = 0;
};

struct TuneResult {
  // The plan to deploy, as JSON: the searched plan, or the faster baseline.
  std::string plan_json;
  // Its strategy: "collage", or the baseline kept instead.
  std::string kept_strategy;
  // One line on why that plan was kept.
  std::string reason;
  // The searched plan, before any fallback: its estimate, its end-to-end
  // median (when verified), and its partitions per backend.
  double searched_estimated_ms = 0;
  std::optional<double> searched_measured_ms;
  std::map<std::string, int> searched_partitions;
  SearchSummary search;
  // Every plan run end to end when verifying (baselines, then collage).
  std::vector<StrategyResult> measured;

  // Writes plan_json to `path` (replacing it); Error if it cannot.
  void save(const std::string& path) const;
};

struct CompareResult {
  // native, single:<b> per backend, greedy (two or more backends), collage.
  std::vector<StrategyResult> strategies;
  // The fastest single-backend plan (native included) whose outputs match.
  std::string best_single;
  // The plan `collage tune` would keep, and why.
  std::string kept_strategy;
  std::string kept_plan_json;
  std::string reason;
};

// Throws Error for a bad model, option or backend name.
TuneResult tune(const std::string& model_path, const TuneOptions& options = {});

// A plan per input shape (docs/shapes.md): tune() once per entry of
// `shapes`, each entry's shapes over options.input_shapes, in order. Throws
// Error as tune() does, and for no entries or two entries alike.
std::vector<TuneResult> tune_shapes(
    const std::string& model_path,
    const std::vector<std::map<std::string, std::vector<std::int64_t>>>& shapes,
    const TuneOptions& options = {});
// The kept plans of `results` (from tune_shapes) as one plan set: JSON text
// that Session takes as plan_json, or saves as a plan file; every run then
// takes the plan for its input shapes.
std::string plan_set_json(const std::vector<TuneResult>& results);
CompareResult compare(const std::string& model_path, const TuneOptions& options = {});

// A backend of this build.
struct BackendInfo {
  std::string name;
  std::string version;
  // "library", "graph" or "compiler".
  std::string style;
  // What it runs: ops and fused patterns.
  std::string support;
};
std::vector<BackendInfo> backends();

// Loads a backend plugin (include/collage/backend_plugin.h, docs/plugins.md)
// into this process: its backend is then listed by backends() and used by
// tune(), compare() and Session like a built-in one, and the `collage
// worker` processes tune() starts load it too ($COLLAGE_BACKEND_PLUGINS,
// read on first use, does the same). Loading a file again does nothing.
// Throws Error naming the file for a library that is not a plugin of this
// ABI version.
void load_backend_plugin(const std::string& path);

}  // namespace collage
