// collage::tune, collage::compare, collage::backends (include/collage/tuning.h)
// over session/tuning.h.
#include "collage/tuning.h"

#include <fmt/format.h>

#include "collage/api/conversions.h"
#include "collage/backends/registry.h"
#include "collage/collage.h"
#include "collage/ir/error.h"
#include "collage/ir/file_io.h"
#include "collage/plan/plan_json.h"
#include "collage/session/model_loading.h"
#include "collage/session/resources.h"
#include "collage/session/tuning.h"

namespace collage {
namespace {

PlanningOptions planning_options(const std::string& model_path, const TuneOptions& options) {
  PlanningOptions planning;
  planning.model_path = model_path;
  planning.input_shapes = options.input_shapes;
  planning.graph_opt = graph_opt_level(options.graph_opt);
  planning.backends =
      options.backends.empty() ? BackendRegistry::global().names() : options.backends;
  planning.threads = options.threads == 0 ? default_threads() : checked_threads(options.threads);
  planning.cache_path = options.cache_path;
  planning.isolate = options.isolate;
  planning.remote_workers = options.remote_workers;
  planning.measure_locally = options.measure_locally;
  planning.prune = options.prune;
  planning.search = options.search;
  for (const std::string& text : options.place) planning.placement.pin(text);
  for (const std::string& text : options.avoid) planning.placement.avoid(text);
  if (!options.patterns_file.empty()) planning.placement.add_patterns_file(options.patterns_file);
  planning.progress = options.progress;
  check_search_settings(planning.search);
  resolve_backends(planning.backends);
  return planning;
}

StrategyResult strategy_result(const EvaluatedPlan& evaluated) {
  return StrategyResult{.strategy = evaluated.plan.label(),
                        .partitions = static_cast<int>(evaluated.plan.partitions.size()),
                        .median_ms = evaluated.timing.median_seconds * 1e3,
                        .p10_ms = evaluated.timing.p10_seconds * 1e3,
                        .p90_ms = evaluated.timing.p90_seconds * 1e3,
                        .estimated_ms = evaluated.plan.estimated_ms,
                        .mismatch = evaluated.mismatch.value_or(""),
                        .same_as = evaluated.same_as};
}

}  // namespace

const char* version() { return "0.1.0"; }

void TuneResult::save(const std::string& path) const {
  api::one_error_type([&] { write_file_atomically(path, plan_json + "\n"); });
}

TuneResult tune(const std::string& model_path, const TuneOptions& options) {
  return api::one_error_type([&] {
    PlanningOptions planning = planning_options(model_path, options);
    Graph graph = load_runnable_model(model_path, planning.input_shapes, planning.graph_opt,
                                      options.max_memory);
    pin_open_dims(graph, planning.input_shapes);
    TuneOutcome outcome =
        tune_model(graph, planning, {.verify = options.verify, .repeat = options.repeat});
    TuneResult result;
    result.plan_json = plan_to_json(outcome.kept).dump(2);
    result.kept_strategy = outcome.kept.strategy;
    result.searched_estimated_ms = outcome.searched.estimated_ms.value_or(0);
    result.searched_measured_ms = outcome.searched.measured_ms;
    result.searched_partitions = outcome.searched.partitions_per_backend();
    const auto& s = outcome.searched.search;
    result.search =
        SearchSummary{s.candidates,  s.measured,   s.cache_hits,  s.invalid,  s.seconds,
                      s.moves_tried, s.moves_kept, s.moves_start, s.screened, s.ruled_out};
    for (const EvaluatedPlan& e : outcome.evaluated) result.measured.push_back(strategy_result(e));
    result.reason = outcome.decision ? describe_kept_plan(*outcome.decision, outcome.evaluated)
                                     : "not verified end to end (verify = false)";
    return result;
  });
}

std::vector<TuneResult> tune_shapes(
    const std::string& model_path,
    const std::vector<std::map<std::string, std::vector<std::int64_t>>>& shapes,
    const TuneOptions& options) {
  api::one_error_type([&] {
    if (shapes.empty()) throw Error("needs at least one entry", {.field = "shapes"});
    if (auto repeat = first_repeated_shapes(shapes)) {
      throw Error(fmt::format("entry {} repeats entry {}", repeat->second, repeat->first),
                  {.field = "shapes"});
    }
  });
  std::vector<TuneResult> results;
  for (const auto& entry : shapes) {
    TuneOptions at = options;
    for (const auto& [name, shape] : entry) at.input_shapes[name] = shape;
    results.push_back(tune(model_path, at));
  }
  return results;
}

std::string plan_set_json(const std::vector<TuneResult>& results) {
  return api::one_error_type([&] {
    std::vector<Plan> plans;
    std::vector<std::map<std::string, Shape>> shapes;
    for (const TuneResult& result : results) {
      nlohmann::json json = nlohmann::json::parse(result.plan_json, nullptr, false);
      if (json.is_discarded()) throw Error("is not JSON", {.field = "plan_json"});
      plans.push_back(plan_from_json(json, "plan_json"));
      shapes.push_back(plans.back().input_shapes);
    }
    if (plans.empty()) throw Error("needs at least one result", {.field = "results"});
    if (auto repeat = first_repeated_shapes(shapes)) {
      throw Error(fmt::format("results {} and {} are plans for the same input shapes: a plan set "
                              "holds one plan per shape",
                              repeat->first, repeat->second),
                  {.field = "results"});
    }
    return plans_to_json(plans).dump(2);
  });
}

CompareResult compare(const std::string& model_path, const TuneOptions& options) {
  return api::one_error_type([&] {
    PlanningOptions planning = planning_options(model_path, options);
    Graph graph = load_runnable_model(model_path, planning.input_shapes, planning.graph_opt,
                                      options.max_memory);
    pin_open_dims(graph, planning.input_shapes);
    CompareOutcome outcome = compare_strategies(graph, planning, options.repeat);
    CompareResult result;
    for (const EvaluatedPlan& e : outcome.results) result.strategies.push_back(strategy_result(e));
    result.best_single = outcome.results[outcome.decision.best_baseline].plan.label();
    const Plan& kept = outcome.results[outcome.decision.kept].plan;
    result.kept_strategy = kept.strategy;
    result.kept_plan_json = plan_to_json(kept).dump(2);
    result.reason = describe_kept_plan(outcome.decision, outcome.results);
    return result;
  });
}

std::vector<BackendInfo> backends() {
  return api::one_error_type([] {
    std::vector<BackendInfo> result;
    for (const Backend* backend : BackendRegistry::global().all()) {
      result.push_back(BackendInfo{backend->name(), backend->version(),
                                   std::string(style_name(backend->style())),
                                   backend->describe_support()});
    }
    return result;
  });
}

void load_backend_plugin(const std::string& path) {
  api::one_error_type([&] { BackendRegistry::load_plugin(path); });
}

}  // namespace collage
