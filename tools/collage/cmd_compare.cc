// `collage compare MODEL`: every strategy on one model, side by side.
//
// Builds the native plan, each single-backend plan, greedy placement in the
// --backends order (what BYOC and ONNX Runtime do), and the collage search,
// then runs them interleaved (A B C A B C ...) on the same inputs and prints
// latency, speedups and collage's estimated vs measured latency (the
// additive error of summing partition costs, of the searched plan in the
// compute layout it ran fastest in: its partitions timed again in between
// the runs (with a measurement cache), and the search's estimate from the
// measurements it used, which may be minutes or days old).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli_flags.h"
#include "collage/ir/error.h"
#include "collage/ir/file_io.h"
#include "collage/plan/plan_json.h"
#include "collage/plan/plan_report.h"
#include "collage/session/model_loading.h"
#include "collage/session/resources.h"
#include "collage/session/tuning.h"
#include "commands.h"
#include "progress.h"

namespace collage::cli {
namespace {

struct CompareArgs {
  PlanningFlags planning;
  std::string json;
  std::string save_plan;
};

double ms(double seconds) { return seconds * 1e3; }

void run_compare(const CompareArgs& args) {
  PlanningOptions options = planning_options(args.planning);
  const std::string& model = args.planning.model;
  const int repeat = args.planning.repeat;
  // Before the measurements, which take minutes: an unwritable output fails now.
  for (const std::string& output : {args.json, args.save_plan}) {
    if (!output.empty()) check_writable(output);
  }
  Graph graph =
      load_runnable_model(model, options.input_shapes, options.graph_opt, args.planning.max_memory);
  if (std::optional<std::string> open = pin_open_dims(graph, options.input_shapes))
    std::fprintf(stderr, "collage: warning: %s\n", open->c_str());
  check_placement(graph, options);
  std::size_t others = resolve_backends(options.backends).size() - 1;
  std::size_t strategies = 1 + others + (others > 1 ? 1 : 0) + 1;
  fmt::print("comparing {} strategies on {} ({} nodes) at {} thread{}\n", strategies, model,
             graph.num_nodes(), options.threads, options.threads == 1 ? "" : "s");
  CompareOutcome outcome;
  try {
    outcome = compare_strategies(graph, options, repeat);
  } catch (const Error& e) {
    throw with_open_dims_hint(e, graph);
  }
  const std::vector<EvaluatedPlan>& results = outcome.results;
  double native = results.front().timing.median_seconds;
  const EvaluatedPlan& best = results[outcome.decision.best_baseline];
  double best_single = best.timing.median_seconds;
  const std::string best_single_name = best.plan.label();

  // The strategy column fits the longest name (greedy: lists every backend).
  std::size_t width = 28;
  for (const EvaluatedPlan& r : results) width = std::max(width, r.plan.label().size() + 1);
  fmt::print("\n{:<{}} {:>5} {:>10} {:>10} {:>10} {:>9} {:>11} {:>10}\n", "strategy", width,
             "parts", "median ms", "p10 ms", "p90 ms", "vs native", "vs best 1", "est ms");
  for (const EvaluatedPlan& r : results) {
    std::string est = r.plan.estimated_ms ? fmt::format("{:.3f}", *r.plan.estimated_ms) : "-";
    fmt::print("{:<{}} {:>5} {:>10.3f} {:>10.3f} {:>10.3f} {:>8.2f}x {:>10.2f}x {:>10}{}\n",
               r.plan.label(), width, r.plan.partitions.size(), ms(r.timing.median_seconds),
               ms(r.timing.p10_seconds), ms(r.timing.p90_seconds), native / r.timing.median_seconds,
               best_single / r.timing.median_seconds, est,
               (r.same_as.empty() ? "" : "  (same plan as " + r.same_as + ")") +
                   (r.mismatch ? "  OUTPUTS DIFFER: " + *r.mismatch : ""));
  }
  // The searched plan in the compute layout it ran fastest in, with the
  // estimate made in that layout.
  const EvaluatedPlan& collage = results[outcome.decision.searched];
  fmt::print("\nbest single backend: {} ({:.3f} ms)\n", best_single_name, ms(best_single));
  if (const std::string int8 = int8_partitions_text(collage.plan); !int8.empty()) {
    fmt::print("collage's int8 partitions (quantized ops): {}\n", int8);
  }
  if (collage.plan.estimated_ms) {
    double measured = ms(collage.timing.median_seconds);
    auto error = [&](double estimate) { return (measured - estimate) / estimate * 100; };
    const auto& searched = collage.plan.search.search_estimated_ms;
    fmt::print("collage: estimated {:.3f} ms{}, measured {:.3f} ms (additive error {:+.1f}%)\n",
               *collage.plan.estimated_ms,
               searched ? " (its partitions timed again in between the runs)" : "", measured,
               error(*collage.plan.estimated_ms));
    if (searched) {
      fmt::print(
          "         the search's estimate, from the measurements it used: {:.3f} ms ({:+.1f}%)\n",
          *searched, error(*searched));
    }
  }
  const Plan* kept = &results[outcome.decision.kept].plan;
  if (outcome.decision.kept != outcome.decision.searched) {
    fmt::print("collage's plan {} in this run; `collage tune` keeps {} for this model\n",
               outcome.decision.reason == KeptPlan::Reason::kSearchedMismatch
                   ? "gave outputs that differ from native's"
                   : "measured slower than " + best_single_name,
               best_single_name);
  } else if (outcome.decision.searched + 1 != results.size()) {
    fmt::print("collage's plan ran faster as {}: `collage tune` keeps it so\n", kept->label());
  }
  if (!args.save_plan.empty()) {
    save_plan(*kept, args.save_plan);
    fmt::print("plan saved to {}\n", args.save_plan);
  }

  if (args.json.empty()) return;
  nlohmann::json strategies_json = nlohmann::json::array();
  for (const EvaluatedPlan& r : results) {
    strategies_json.push_back(
        {{"name", r.plan.label()},
         {"latency_ms_median", ms(r.timing.median_seconds)},
         {"latency_ms_p10", ms(r.timing.p10_seconds)},
         {"latency_ms_p90", ms(r.timing.p90_seconds)},
         {"partitions", r.plan.partitions.size()},
         {"estimated_ms", r.plan.estimated_ms ? nlohmann::json(*r.plan.estimated_ms) : nullptr},
         {"search_estimated_ms", r.plan.search.search_estimated_ms
                                     ? nlohmann::json(*r.plan.search.search_estimated_ms)
                                     : nullptr},
         {"outputs_match", !r.mismatch.has_value()},
         {"same_as", r.same_as.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.same_as)}});
  }
  nlohmann::json document = {
      {"model", model},
      {"threads", options.threads},
      {"repeat", repeat},
      {"machine", machine_text(options.threads)},
      {"strategies", strategies_json},
      {"search_estimated_ms", collage.plan.search.search_estimated_ms
                                  ? nlohmann::json(*collage.plan.search.search_estimated_ms)
                                  : nullptr},
      {"search", plan_to_json(collage.plan)["search"]}};
  write_file_atomically(args.json, document.dump(2) + "\n");
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Run native, each single backend, greedy placement and collage side by side");
  args->planning.repeat = 20;
  add_planning_flags(*cmd, args->planning,
                     "backends, comma-separated, in greedy priority order, or 'all'",
                     "interleaved rounds (one run of each strategy per round)");
  cmd->add_option("--json", args->json, "also write the results as JSON");
  cmd->add_option("-o,--save-plan", args->save_plan,
                  "save the collage plan (or the faster baseline's, see above)");
  cmd->callback([args] { run_compare(*args); });
}

}  // namespace collage::cli
