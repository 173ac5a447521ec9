#include "collage/session/tuning.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collage/backends/registry.h"
#include "collage/cost/cache_keys.h"
#include "collage/ir/error.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/search/strategy.h"
#include "collage/session/measuring.h"
#include "collage/session/parts_retiming.h"
#include "collage/session/resources.h"
#include "collage/session/tuner.h"

namespace collage {
namespace {

// How many times `repeat` rounds near ties are timed again for
// (time_near_ties_again).
constexpr int kNearTieRounds = 3;

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

// `plan` in each other layout that a backend it runs can compute in
// (Backend::compute_layouts), or in its own again when the plan names
// another: which layout is faster depends on the model (docs/onednn.md),
// so the evaluation times each.
std::vector<Plan> compute_layout_variants(const Plan& plan) {
  std::set<std::string> used;
  for (const PlanPartition& partition : plan.partitions) used.insert(partition.backend);
  std::vector<Plan> variants;
  for (const std::string& name : used) {
    const Backend* backend = BackendRegistry::global().find(name);
    if (backend == nullptr) continue;
    const auto named = plan.compute_layouts.find(name);
    if (named != plan.compute_layouts.end()) {
      Plan own = plan;
      own.compute_layouts.erase(name);
      variants.push_back(std::move(own));
    }
    for (EdgeLayout layout : backend->compute_layouts()) {
      if (named != plan.compute_layouts.end() && named->second == edge_layout_name(layout)) {
        continue;
      }
      Plan variant = plan;
      variant.compute_layouts[name] = edge_layout_name(layout);
      variants.push_back(std::move(variant));
    }
  }
  return variants;
}

// How many interleaved rounds choose_search_layout times each plan.
constexpr int kLayoutRounds = 5;

// How a compute-layout variant of the searched plan is estimated in its
// layout: with the charges learned before, or fitted to its runs.
enum class VariantCharges { kLearned, kFitted };

// `variant`, a compute-layout variant of the plan the search made, with
// the estimate the search makes of its cover in the layout it computes in
// (Tuner::estimate, or Tuner::estimate_fitted after tune's runs): an
// estimate carried over from the searched layout was of other runs
// (squeezenet's, searched in oneDNN's own layout and kept in nChw16c, ran
// 10% under it; estimated in nChw16c, within 1%). As it was when it has
// bodies or its partitions cannot all be measured there (reported).
Plan estimated_in_its_layout(const Graph& graph, Plan variant, const PlanningOptions& options,
                             VariantCharges charges) {
  if (!variant.estimated_ms || !variant.bodies.empty()) return variant;
  PlanningOptions in_layout = options;
  in_layout.search_layout = plan_compute_layout(variant);
  const std::string layout =
      in_layout.search_layout ? edge_layout_name(*in_layout.search_layout) : "each backend's own";
  if (options.progress) {
    options.progress(TuneProgress{
        .stage = TuneProgress::Stage::kVerify,
        .message = fmt::format(
            "estimating the searched plan's {} partitions in {} layout{}",
            variant.partitions.size(), layout,
            charges == VariantCharges::kFitted ? ", its charges fitted to its runs there" : "")});
  }
  std::string why = "a partition is invalid there";
  try {
    const DataflowGraph dfg(graph);
    const Strategy collage = Strategy::parse("collage");
    Tuner tuner(graph, dfg, collage, in_layout);
    std::optional<Plan> estimated = charges == VariantCharges::kFitted
                                        ? tuner.estimate_fitted(variant)
                                        : tuner.estimate(variant);
    if (estimated) return *estimated;
  } catch (const Error& e) {
    why = e.what();
  }
  if (options.progress) {
    options.progress(TuneProgress{
        .stage = TuneProgress::Stage::kVerify,
        .message = fmt::format("the searched plan in {} layout keeps its searched estimate: {}",
                               layout, why)});
  }
  return variant;
}

// What tune and compare evaluate: each baseline followed by its
// compute-layout variants, then for each searched plan its variants and
// itself.
struct PlansToEvaluate {
  std::vector<Plan> plans;
  // Where the first searched plan's entries start.
  std::size_t first_searched = 0;
  // The entries that are a searched plan's compute-layout variants.
  std::vector<std::size_t> variants;
  // The entries that are the searched plans themselves.
  std::vector<std::size_t> searched;
};

PlansToEvaluate in_every_compute_layout(const std::vector<Plan>& baselines,
                                        std::vector<Plan> searched) {
  PlansToEvaluate all;
  for (const Plan& plan : baselines) {
    all.plans.push_back(plan);
    for (Plan& variant : compute_layout_variants(plan)) all.plans.push_back(std::move(variant));
  }
  all.first_searched = all.plans.size();
  for (Plan& plan : searched) {
    for (Plan& variant : compute_layout_variants(plan)) {
      all.variants.push_back(all.plans.size());
      all.plans.push_back(std::move(variant));
    }
    all.searched.push_back(all.plans.size());
    all.plans.push_back(std::move(plan));
  }
  return all;
}

// The plans of the baseline `strategies`. Under placement constraints a
// baseline may have no plan (a node only an avoided backend of it runs):
// it is left out and the progress says so.
std::vector<Plan> baseline_plans(const Graph& graph, const std::vector<std::string>& strategies,
                                 const PlanningOptions& options) {
  std::vector<Plan> plans;
  for (const std::string& name : strategies) {
    try {
      plans.push_back(make_plan(graph, Strategy::parse(name), options));
    } catch (const Error& e) {
      if (options.placement.empty()) throw;
      if (options.progress) {
        options.progress(TuneProgress{
            .stage = TuneProgress::Stage::kVerify,
            .message =
                fmt::format("{} left out: under the placement constraints, {}", name, e.what())});
      }
    }
  }
  return plans;
}

// `backends` without those whose candidates crashed or hung the measuring
// worker during the searches of `searched`: their plans would run in this
// process.
std::vector<std::string> without_failed(const std::vector<std::string>& backends,
                                        const std::vector<Plan>& searched,
                                        const PlanningOptions& options) {
  auto failed = [&](const std::string& name) {
    return std::any_of(searched.begin(), searched.end(), [&](const Plan& plan) {
      const std::vector<std::string>& names = plan.search.failed_backends;
      return std::find(names.begin(), names.end(), name) != names.end();
    });
  };
  std::vector<std::string> kept;
  for (const std::string& name : backends) {
    if (!failed(name)) {
      kept.push_back(name);
    } else if (options.progress) {
      options.progress(TuneProgress{
          .stage = TuneProgress::Stage::kVerify,
          .message = fmt::format("single:{} not run: its candidates crashed or hung the "
                                 "measuring worker",
                                 name)});
    }
  }
  return kept;
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

}  // namespace

std::optional<EdgeLayout> choose_search_layout(const Graph& graph, const PlanningOptions& options) {
  if (options.search_layout) return options.search_layout;
  if (options.search.layout == "own" || options.search.layout == "each") return std::nullopt;
  if (options.search.layout != "auto") return edge_layout_from_name(options.search.layout);
  // A tune from a warm cache searches where the first one chose to.
  std::unique_ptr<MeasurementCache> cache = open_planning_cache(options);
  const std::string machine = measuring_machine(options);
  const std::string key =
      search_layout_key(model_key(graph, resolve_backends(options.backends)), machine);
  if (cache) {
    if (std::optional<CachedMeasurement> stored = cache->find(key)) {
      if (stored->reason == "own") return std::nullopt;
      if (std::optional<EdgeLayout> layout = edge_layout_from_name(stored->reason)) return layout;
    }
  }
  // Each backend that computes in several layouts: its single plan in each.
  std::vector<Plan> plans;
  for (const std::string& name : other_backends(options)) {
    if (BackendRegistry::global().get(name).compute_layouts().empty()) continue;
    std::vector<Plan> single = baseline_plans(graph, {"single:" + name}, options);
    if (single.empty()) continue;
    plans.push_back(single.front());
    for (Plan& variant : compute_layout_variants(single.front())) plans.push_back(variant);
  }
  if (plans.size() < 2) return std::nullopt;
  if (options.progress) {
    options.progress(TuneProgress{
        .stage = TuneProgress::Stage::kLayout,
        .message = fmt::format("choosing the search's layout: timing {} single-backend plans",
                               plans.size())});
  }
  const std::vector<EvaluatedPlan> timed =
      evaluate_plans(graph, plans, options.threads, kLayoutRounds, 2);
  const EvaluatedPlan* fastest = nullptr;
  for (const EvaluatedPlan& evaluated : timed) {
    if (evaluated.mismatch) continue;
    if (fastest == nullptr || evaluated.timing.median_seconds < fastest->timing.median_seconds) {
      fastest = &evaluated;
    }
  }
  if (fastest == nullptr) return std::nullopt;
  const std::optional<EdgeLayout> layout = plan_compute_layout(fastest->plan);
  if (cache) {
    cache->store(key, CachedMeasurement{.valid = true,
                                        .reason = layout ? edge_layout_name(*layout) : "own",
                                        .machine = machine});
  }
  if (options.progress) {
    std::string times;
    for (const EvaluatedPlan& evaluated : timed) {
      times += fmt::format("{}{} {:.2f} ms", times.empty() ? "" : ", ", evaluated.plan.label(),
                           evaluated.timing.median_seconds * 1e3);
    }
    options.progress(TuneProgress{
        .stage = TuneProgress::Stage::kLayout,
        .finished = true,
        .message =
            fmt::format("searching in {} ({})",
                        layout ? edge_layout_name(*layout) : "each backend's own layout", times)});
  }
  return layout;
}

std::vector<std::optional<EdgeLayout>> search_layouts(const Graph& graph,
                                                      const PlanningOptions& options) {
  if (options.search_layout || options.search.layout != "each") {
    return {choose_search_layout(graph, options)};
  }
  std::vector<std::optional<EdgeLayout>> layouts = {std::nullopt};
  for (const Backend* backend : resolve_backends(options.backends)) {
    for (EdgeLayout layout : backend->compute_layouts()) {
      if (std::find(layouts.begin(), layouts.end(), layout) == layouts.end()) {
        layouts.push_back(layout);
      }
    }
  }
  return layouts;
}

TuneOutcome tune_model(const Graph& graph, const PlanningOptions& options,
                       const TuneSettings& settings) {
  check_options(options, settings.repeat);
  std::vector<std::string> others = other_backends(options);
  TuneOutcome outcome;
  std::vector<Plan> searched = searched_plans(graph, options);
  outcome.searched = lowest_estimate(searched);
  outcome.kept = outcome.searched;
  if (!settings.verify) return outcome;
  others = without_failed(others, searched, options);

  // The collage plans beside every single-backend baseline, interleaved.
  // Each in the layouts its backends can compute in, each searched plan's
  // own after its variants.
  std::vector<std::string> strategies = {"native"};
  for (const std::string& name : others) strategies.push_back("single:" + name);
  std::vector<Plan> baselines = baseline_plans(graph, strategies, options);
  const PlansToEvaluate plans = in_every_compute_layout(baselines, std::move(searched));
  outcome.evaluated = evaluate_plans(graph, plans.plans, options.threads, settings.repeat, 2);
  // A choice within the noise of `repeat` rounds is timed again for longer.
  time_near_ties_again(graph, outcome.evaluated, options.threads, kNearTieRounds * settings.repeat);
  report_verification(options, outcome.evaluated);
  outcome.decision = keep_faster_plan(outcome.evaluated);
  // The searched plan in each other layout has its charges there fitted to
  // its runs, as the search fits its own plan's, and kept for the model in
  // that layout: the layout that runs it fastest flips between near ties
  // (U-Net's mixed plan, estimated in nChw16c with its own layout's
  // charges, came 18 % under its runs there).
  for (std::size_t i : plans.variants) {
    Plan& variant = outcome.evaluated[i].plan;
    variant = estimated_in_its_layout(graph, std::move(variant), options, VariantCharges::kFitted);
  }
  // A plan searched in a layout other than the backends' own has its
  // charges fitted to its runs last, so that the charges kept for the
  // layout are its own plan's. That search began from the charges of the
  // model's own layout, and the variants' fits are of other plans:
  // EfficientNetV2-S's, fitted to its 3-partition plan of the own layout
  // (476 us per oneDNN partition), put its 139-partition nChw16c plan at
  // 83 ms; it ran in 26.
  for (std::size_t i : plans.searched) {
    Plan& searched = outcome.evaluated[i].plan;
    const std::optional<EdgeLayout> layout = plan_compute_layout(searched);
    if (!layout || searched.search.layout != edge_layout_name(*layout)) continue;
    searched =
        estimated_in_its_layout(graph, std::move(searched), options, VariantCharges::kFitted);
  }
  outcome.searched = outcome.evaluated[outcome.decision->searched].plan;
  outcome.kept = outcome.evaluated[outcome.decision->kept].plan;
  // A kept baseline still records the search that was made for this model.
  outcome.kept.search = outcome.searched.search;
  outcome.kept.verification = strategy_timings(outcome.evaluated);
  return outcome;
}

CompareOutcome compare_strategies(const Graph& graph, const PlanningOptions& options, int repeat) {
  check_options(options, repeat);
  // The search first (make_plan checks the placement before measuring): a
  // backend whose candidates crashed its measuring worker gets no plan run
  // in this process.
  std::vector<Plan> searched = searched_plans(graph, options);
  std::vector<std::string> others = without_failed(other_backends(options), searched, options);
  std::vector<std::string> strategies = {"native"};
  for (const std::string& name : others) strategies.push_back("single:" + name);
  if (others.size() > 1) {
    strategies.push_back("greedy:" + fmt::format("{}", fmt::join(others, ",")));
  }

  // Each in the layouts its backends can compute in, each searched plan's
  // own after its variants; a searched plan in each layout is estimated in
  // it, and its partitions are timed again in between the runs.
  std::vector<Plan> baselines = baseline_plans(graph, strategies, options);
  PlansToEvaluate to_evaluate = in_every_compute_layout(baselines, std::move(searched));
  std::vector<Plan>& plans = to_evaluate.plans;
  const std::size_t first_searched = to_evaluate.first_searched;
  for (std::size_t i : to_evaluate.variants) {
    plans[i] =
        estimated_in_its_layout(graph, std::move(plans[i]), options, VariantCharges::kLearned);
  }
  CompareOutcome outcome;
  // With a measurement cache, the collage plan's partitions are timed
  // again in between the runs, a few before each chunk of rounds, so that
  // its estimate sums parts timed at the speed the runs saw (without one,
  // the search's measurements are not kept to compare with).
  struct Retimed {
    std::size_t plan;
    std::unique_ptr<PartsRetimer> retimer;
    // Per partition: how much longer each timing took than the estimate.
    std::vector<std::vector<double>> change_ms;
  };
  std::vector<Retimed> retimed;
  int parts = 0;
  for (std::size_t i = first_searched; i < plans.size(); ++i) {
    if (options.cache_path == "none" || !plans[i].estimated_ms) continue;
    auto retimer = std::make_unique<PartsRetimer>(graph, plans[i], options);
    const std::size_t size = retimer->size();
    parts = std::max(parts, static_cast<int>(size));
    retimed.push_back({i, std::move(retimer), std::vector<std::vector<double>>(size)});
  }
  const int chunks = std::max(1, std::min(repeat, parts));
  // Each partition is timed twice, half the runs apart (back to back
  // before the runs when there is one chunk).
  constexpr std::size_t kTimings = 2;
  auto retime_parts = [&](int chunk) {
    if (options.progress && chunk == 0) {
      std::size_t total = 0;
      for (const Retimed& r : retimed) total += r.change_ms.size();
      options.progress(TuneProgress{
          .stage = TuneProgress::Stage::kRefine,
          .message = fmt::format("timing the searched plan's {} partitions again in between the "
                                 "runs (in {} layout{})",
                                 total, retimed.size(), retimed.size() == 1 ? "" : "s")});
    }
    // Every chunks-th partition from `chunk` on, and from half a cycle
    // later: the large and small ones spread over the runs alike.
    for (Retimed& r : retimed) {
      const int size = static_cast<int>(r.change_ms.size());
      for (int first : {chunk, (chunk + chunks / 2) % chunks}) {
        for (int i = first; i < size; i += chunks) {
          const auto index = static_cast<std::size_t>(i);
          if (std::optional<double> change = r.retimer->retime(index)) {
            r.change_ms[index].push_back(*change);
          }
        }
      }
    }
  };
  outcome.results =
      evaluate_plans(graph, plans, options.threads, repeat, 3, chunks,
                     retimed.empty() ? nullptr : std::function<void(int)>(retime_parts));
  for (const Retimed& r : retimed) {
    Plan& collage = outcome.results[r.plan].plan;
    // An invalid timing leaves its partition short, and the search's
    // estimate stands.
    const bool all_timed =
        collage.partitions.size() == r.change_ms.size() &&
        std::all_of(r.change_ms.begin(), r.change_ms.end(),
                    [&](const std::vector<double>& c) { return c.size() == kTimings; });
    if (!all_timed) continue;
    collage.search.search_estimated_ms = collage.estimated_ms;
    double total = 0;
    for (std::size_t i = 0; i < r.change_ms.size(); ++i) {
      std::optional<double>& estimate = collage.partitions[i].estimated_ms;
      if (estimate) *estimate += settled_retiming(*estimate, r.change_ms[i]);
      total += estimate.value_or(0);
    }
    collage.estimated_ms = total;
  }
  outcome.decision = keep_faster_plan(outcome.results);
  outcome.results[outcome.decision.kept].plan.verification = strategy_timings(outcome.results);
  return outcome;
}

}  // namespace collage
