#include "collage/session/tuning.h"

#include <fmt/format.h>

#include "collage/ir/error.h"
#include "collage/session/resources.h"

namespace collage {
namespace {

void check_options(const PlanningOptions& options, int repeat) {
  checked_threads(options.threads);
  check_search_settings(options.search);
  if (repeat < 1) throw Error("must be at least 1", {.field = "--repeat"});
}

// The backends besides native, in the given order.
std::vector<std::string> other_backends(const PlanningOptions& options) {
  std::vector<std::string> names;
  for (const Backend* backend : resolve_backends(options.backends)) {
    if (backend->name() != "native") names.push_back(backend->name());
  }
  return names;
}

void report_verification(const PlanningOptions& options, const std::vector<EvaluatedPlan>& plans) {
  if (!options.progress) return;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    options.progress(TuneProgress{.stage = TuneProgress::Stage::kVerify,
                                  .done = i + 1,
                                  .total = plans.size(),
                                  .finished = i + 1 == plans.size(),
                                  .message = describe_evaluated(plans[i])});
  }
}

// `before`'s estimates averaged with those of `after`, the same plan with
// its parts timed again later; `before` as it is when the two differ.
Plan with_estimates_averaged(Plan before, const Plan& after) {
  if (!before.estimated_ms || !after.estimated_ms ||
      before.partitions_signature() != after.partitions_signature()) {
    return before;
  }
  for (std::size_t i = 0; i < before.partitions.size(); ++i) {
    std::optional<double>& estimate = before.partitions[i].estimated_ms;
    const std::optional<double>& later = after.partitions[i].estimated_ms;
    if (estimate && later) *estimate = (*estimate + *later) / 2;
  }
  before.estimated_ms = (*before.estimated_ms + *after.estimated_ms) / 2;
  before.search.timed_around_runs = true;
  return before;
}

}  // namespace

TuneOutcome tune_model(const Graph& graph, const PlanningOptions& options,
                       const TuneSettings& settings) {
  check_options(options, settings.repeat);
  std::vector<std::string> others = other_backends(options);
  TuneOutcome outcome;
  outcome.searched = make_plan(graph, Strategy::parse("collage"), options);
  outcome.kept = outcome.searched;
  if (!settings.verify) return outcome;

  // The collage plan beside every single-backend baseline, interleaved.
  std::vector<Plan> plans = {make_plan(graph, Strategy::parse("native"), options)};
  for (const std::string& name : others) {
    plans.push_back(make_plan(graph, Strategy::parse("single:" + name), options));
  }
  plans.push_back(outcome.searched);
  outcome.evaluated = evaluate_plans(graph, plans, options.threads, settings.repeat, 2);
  report_verification(options, outcome.evaluated);
  outcome.decision = keep_faster_plan(outcome.evaluated);
  outcome.searched = outcome.evaluated[outcome.decision->searched].plan;
  outcome.kept = outcome.evaluated[outcome.decision->kept].plan;
  // A kept baseline still records the search that was made for this model.
  outcome.kept.search = outcome.searched.search;
  return outcome;
}

CompareOutcome compare_strategies(const Graph& graph, const PlanningOptions& options, int repeat) {
  check_options(options, repeat);
  std::vector<std::string> others = other_backends(options);
  std::vector<std::string> strategies = {"native"};
  for (const std::string& name : others) strategies.push_back("single:" + name);
  if (others.size() > 1) {
    strategies.push_back("greedy:" + fmt::format("{}", fmt::join(others, ",")));
  }
  strategies.push_back("collage");

  // The collage plan's partitions are timed again once it is found, and
  // with a measurement cache once more after the runs (the search, from
  // the same cache, finds the same plan; without one it would measure
  // every candidate again): its estimate is the mean of the two, so that
  // the machine's speed during the runs weighs on the estimate as on the
  // runs.
  PlanningOptions collage_options = options;
  collage_options.search.retime_estimate = true;
  std::vector<Plan> plans;
  for (const std::string& name : strategies) {
    plans.push_back(
        make_plan(graph, Strategy::parse(name), name == "collage" ? collage_options : options));
  }
  CompareOutcome outcome;
  outcome.results = evaluate_plans(graph, plans, options.threads, repeat, 3);
  Plan& collage = outcome.results.back().plan;
  if (collage.search.search_estimated_ms && options.cache_path != "none") {
    collage = with_estimates_averaged(
        collage, make_plan(graph, Strategy::parse("collage"), collage_options));
  }
  outcome.decision = keep_faster_plan(outcome.results);
  return outcome;
}

}  // namespace collage
