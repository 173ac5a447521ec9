// `collage tune MODEL`: search for the fastest plan and save it.
//
// Measures every candidate of every backend (through the cache, in a worker
// process), finds the cheapest cover, then runs the plan end to end beside
// the single-backend baselines. A plan that measures slower than the best
// baseline is not kept: the baseline's plan is saved instead, and the tool
// says so.
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "cli_flags.h"
#include "collage/ir/error.h"
#include "collage/plan/plan_json.h"
#include "collage/session/model_loading.h"
#include "collage/session/resources.h"
#include "collage/session/tuning.h"
#include "commands.h"
#include "progress.h"

namespace collage::cli {
namespace {

struct TuneArgs {
  std::string model;
  std::vector<std::string> input_shapes;
  std::string graph_opt = "all";
  std::string backends = "all";
  std::string cache;
  std::string max_memory;
  std::string output;
  int threads = 0;
  int repeat = 10;
  bool no_isolation = false;
  bool prune = false;
  bool no_verify = false;
  bool quiet = false;
  SearchSettings search;
};

std::string default_plan_path(const std::string& model) {
  return std::filesystem::path(model).stem().string() + ".plan.json";
}

void print_summary(const Plan& plan) {
  fmt::print("\n{:<10} {:>10} {:>8}\n", "backend", "partitions", "nodes");
  std::map<std::string, int> nodes;
  for (const PlanPartition& p : plan.partitions)
    nodes[p.backend] += static_cast<int>(p.nodes.size());
  for (const auto& [backend, count] : plan.partitions_per_backend()) {
    fmt::print("{:<10} {:>10} {:>8}\n", backend, count, nodes[backend]);
  }
  fmt::print("search: {} candidates, {} measured, {} from cache, {} invalid, {:.1f} s\n",
             plan.search.candidates, plan.search.measured, plan.search.cache_hits,
             plan.search.invalid, plan.search.seconds);
  if (plan.estimated_ms) fmt::print("estimated latency: {:.3f} ms\n", *plan.estimated_ms);
}

void run_tune(const TuneArgs& args) {
  PlanningOptions options;
  options.model_path = args.model;
  options.input_shapes = parse_input_shapes(args.input_shapes);
  options.graph_opt = graph_opt_level(args.graph_opt);
  options.backends = parse_backend_list(args.backends);
  options.threads = checked_threads(args.threads);
  options.cache_path = args.cache;
  options.isolate = !args.no_isolation;
  options.prune = args.prune;
  options.search = args.search;
  options.progress = progress_printer(!args.quiet);
  check_search_settings(options.search);
  if (args.repeat < 1) throw Error("must be at least 1", {.field = "--repeat"});

  Graph graph = load_model(args.model, options.input_shapes, options.graph_opt);
  require_native_support(graph, args.model);
  check_max_memory(graph, args.max_memory);
  resolve_backends(options.backends);
  fmt::print("tuning {} ({} nodes) with {} at {} thread{}\n", args.model, graph.num_nodes(),
             fmt::join(options.backends, ","), options.threads, options.threads == 1 ? "" : "s");

  TuneOutcome outcome =
      tune_model(graph, options, {.verify = !args.no_verify, .repeat = args.repeat});
  print_summary(outcome.searched);
  Plan plan = outcome.kept;
  if (outcome.decision) {
    for (const EvaluatedPlan& e : outcome.evaluated) {
      fmt::print("  {:<18} {:>9.3f} ms{}\n", e.plan.strategy, e.timing.median_seconds * 1e3,
                 e.mismatch ? "  (outputs differ: " + *e.mismatch + ")" : "");
    }
    const EvaluatedPlan& searched = outcome.evaluated[outcome.decision->searched];
    const EvaluatedPlan& best = outcome.evaluated[outcome.decision->best_baseline];
    switch (outcome.decision->reason) {
      case KeptPlan::Reason::kSearchedMismatch:
        fmt::print("the searched plan's outputs differ from native ({}); keeping {} instead\n",
                   *searched.mismatch, best.plan.strategy);
        break;
      case KeptPlan::Reason::kBaselineFaster:
        fmt::print(
            "the searched plan measured {:.3f} ms, slower than {} at {:.3f} ms; keeping {}\n",
            searched.timing.median_seconds * 1e3, best.plan.strategy,
            best.timing.median_seconds * 1e3, best.plan.strategy);
        break;
      case KeptPlan::Reason::kSearchedIsFastest:
        fmt::print("measured end to end: {:.3f} ms (estimated {:.3f} ms), {:.2f}x faster than {}\n",
                   searched.timing.median_seconds * 1e3, searched.plan.estimated_ms.value_or(0),
                   best.timing.median_seconds / searched.timing.median_seconds, best.plan.strategy);
        break;
    }
  }
  std::string output = args.output.empty() ? default_plan_path(args.model) : args.output;
  save_plan(plan, output);
  fmt::print("plan saved to {} (replay: collage run {} --plan {})\n", output, args.model, output);
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Search for the fastest partitioning of a model and save the plan");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  add_input_shape_flag(*cmd, args->input_shapes);
  add_graph_opt_flag(*cmd, args->graph_opt);
  cmd->add_option("--backends", args->backends,
                  "backends to use, comma-separated, or 'all' (native is always included)")
      ->capture_default_str();
  cmd->add_option("--cache", args->cache,
                  "measurement cache file (default: $XDG_CACHE_HOME/collage/measurements.sqlite; "
                  "'none' for no cache)");
  cmd->add_option("-o,--output", args->output,
                  "where to save the plan (default: MODEL_STEM.plan.json)");
  add_threads_flag(*cmd, args->threads);
  add_max_memory_flag(*cmd, args->max_memory);
  cmd->add_option("--repeat", args->repeat, "end-to-end runs per plan when verifying")
      ->capture_default_str();
  cmd->add_flag("--no-isolation", args->no_isolation,
                "measure in this process (faster start, but a crashing backend ends the run)");
  cmd->add_flag("--prune", args->prune, "measure only the maximal candidates of each backend");
  cmd->add_flag("--no-verify", args->no_verify,
                "skip the end-to-end check against the single-backend baselines");
  cmd->add_flag("-q,--quiet", args->quiet, "no progress display");
  add_search_flags(*cmd, args->search);
  cmd->callback([args] { run_tune(*args); });
}

}  // namespace collage::cli
