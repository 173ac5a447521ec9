// `collage tune MODEL`: search for the fastest plan and save it.
//
// Measures every candidate of every backend (through the cache, in a worker
// process), finds the cheapest cover, then runs the plan end to end beside
// the single-backend baselines. A plan that measures slower than the best
// baseline is not kept: the baseline's plan is saved instead, and the tool
// says so. Several shapes for an input (--input-shape given twice, or a
// range) are tuned one after the other into a plan set (docs/shapes.md).
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
#include "collage/session/shape_plans.h"
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

// Tunes the model at one set of input shapes and returns the plan to keep.
Plan tune_at(const TuneArgs& args, PlanningOptions options) {
  const std::string& model = args.planning.model;
  Graph graph =
      load_runnable_model(model, options.input_shapes, options.graph_opt, args.planning.max_memory);
  if (std::optional<std::string> open = pin_open_dims(graph, options.input_shapes))
    std::fprintf(stderr, "collage: warning: %s\n", open->c_str());
  check_placement(graph, options);
  fmt::print("tuning {} ({} nodes) with {} at {} thread{}\n", model, graph.num_nodes(),
             fmt::join(options.backends, ","), options.threads, options.threads == 1 ? "" : "s");

  TuneOutcome outcome;
  try {
    outcome =
        tune_model(graph, options, {.verify = !args.no_verify, .repeat = args.planning.repeat});
  } catch (const Error& e) {
    throw with_open_dims_hint(e, graph);
  }
  print_summary(outcome.searched);
  if (outcome.decision) {
    for (const EvaluatedPlan& e : outcome.evaluated) fmt::print("  {}\n", describe_evaluated(e));
    fmt::print("{}\n", describe_kept_plan(*outcome.decision, outcome.evaluated));
  }
  return outcome.kept;
}

void run_tune(const TuneArgs& args) {
  // Several shapes for an input make a plan set, one plan per shape.
  const std::vector<std::map<std::string, Shape>> shape_sets =
      parse_input_shape_sets(args.planning.input_shapes);
  PlanningFlags flags = args.planning;
  flags.input_shapes.clear();
  const PlanningOptions options = planning_options(flags);
  const std::string& model = args.planning.model;
  const std::string output = args.output.empty() ? default_plan_path(model) : args.output;
  // Before the search, which takes minutes: an unwritable output fails now.
  check_writable(output);
  std::vector<Plan> plans;
  for (std::size_t i = 0; i < shape_sets.size(); ++i) {
    PlanningOptions at = options;
    at.input_shapes = shape_sets[i];
    if (shape_sets.size() > 1) {
      fmt::print("{}plan {} of {}: {}\n", i == 0 ? "" : "\n", i + 1, shape_sets.size(),
                 escape_control(shapes_text(shape_sets[i])));
    }
    plans.push_back(tune_at(args, std::move(at)));
  }
  save_plans(plans, output);
  if (plans.size() == 1) {
    fmt::print("plan saved to {} (replay: collage run {} --plan {})\n", output, model, output);
    return;
  }
  fmt::print(
      "\n{} plans saved to {}, one per input shape (replay: collage run {} --plan {}; "
      "each run takes the plan for its shapes)\n",
      plans.size(), output, model, output);
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Search for the fastest partitioning of a model and save the plan");
  add_planning_flags(*cmd, args->planning,
                     "backends to use, comma-separated, or 'all' (native is always included)",
                     "end-to-end runs per plan when verifying");
  cmd->get_option("--input-shape")
      ->description(
          "fix an input's shape: NAME=D0,D1,... (repeatable); give an input several times, or "
          "a dimension as a range LO..HI (LO, the powers of two between, HI), to tune a plan "
          "per shape into one plan file");
  cmd->add_option("-o,--output", args->output,
                  "where to save the plan (default: MODEL_STEM.plan.json)");
  cmd->add_flag("--no-verify", args->no_verify,
                "skip the end-to-end check against the single-backend baselines");
  cmd->callback([args] { run_tune(*args); });
}

}  // namespace collage::cli
