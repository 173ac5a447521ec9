// `collage tune MODEL`: search for the fastest plan and save it.
//
// Measures every candidate of every backend (through the cache, in a worker
// process), finds the cheapest cover, then runs the plan end to end beside
// the single-backend baselines. A plan that measures slower than the best
// baseline is not kept: the baseline's plan is saved instead, and the tool
// says so.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli_flags.h"
#include "collage/ir/error.h"
#include "collage/ir/file_io.h"
#include "collage/plan/plan_json.h"
#include "collage/session/model_loading.h"
#include "collage/session/resources.h"
#include "collage/session/tuning.h"
#include "commands.h"
#include "progress.h"

namespace collage::cli {
namespace {

struct TuneArgs {
  PlanningFlags planning;
  std::string output;
  bool no_verify = false;
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
  if (plan.search.screened > 0 || plan.search.ruled_out > 0) {
    fmt::print("screening: {} screened with a short timing, {} ruled out by their bound\n",
               plan.search.screened, plan.search.ruled_out);
  }
  if (plan.estimated_ms) fmt::print("estimated latency: {:.3f} ms\n", *plan.estimated_ms);
}

void run_tune(const TuneArgs& args) {
  PlanningOptions options = planning_options(args.planning);
  const std::string& model = args.planning.model;
  const std::string output = args.output.empty() ? default_plan_path(model) : args.output;
  // Before the search, which takes minutes: an unwritable output fails now.
  check_writable(output);
  Graph graph =
      load_runnable_model(model, options.input_shapes, options.graph_opt, args.planning.max_memory);
  if (std::optional<std::string> open = pin_open_dims(graph, options.input_shapes))
    std::fprintf(stderr, "collage: warning: %s\n", open->c_str());
  check_placement(graph, options);
  fmt::print("tuning {} ({} nodes) with {} at {} thread{}\n", model, graph.num_nodes(),
             fmt::join(options.backends, ","), options.threads, options.threads == 1 ? "" : "s");

  TuneOutcome outcome =
      tune_model(graph, options, {.verify = !args.no_verify, .repeat = args.planning.repeat});
  print_summary(outcome.searched);
  Plan plan = outcome.kept;
  if (outcome.decision) {
    for (const EvaluatedPlan& e : outcome.evaluated) fmt::print("  {}\n", describe_evaluated(e));
    fmt::print("{}\n", describe_kept_plan(*outcome.decision, outcome.evaluated));
  }
  save_plan(plan, output);
  fmt::print("plan saved to {} (replay: collage run {} --plan {})\n", output, model, output);
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Search for the fastest partitioning of a model and save the plan");
  add_planning_flags(*cmd, args->planning,
                     "backends to use, comma-separated, or 'all' (native is always included)",
                     "end-to-end runs per plan when verifying");
  cmd->add_option("-o,--output", args->output,
                  "where to save the plan (default: MODEL_STEM.plan.json)");
  cmd->add_flag("--no-verify", args->no_verify,
                "skip the end-to-end check against the single-backend baselines");
  cmd->callback([args] { run_tune(*args); });
}

}  // namespace collage::cli
