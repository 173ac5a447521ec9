#include "collage/session/evaluation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <functional>
#include <set>

#include "collage/backends/registry.h"
#include "collage/cost/measurer.h"
#include "collage/ir/runtime_shapes.h"
#include "collage/plan/plan_compiler.h"
#include "collage/runtime/interleaved_timing.h"
#include "collage/runtime/random_inputs.h"

namespace collage {
std::optional<std::string> outputs_differ(const std::map<std::string, Tensor>& actual,
                                          const std::map<std::string, Tensor>& expected,
                                          const PlanTolerance& tolerance) {
  for (const auto& [name, tensor] : expected) {
    auto it = actual.find(name);
    if (it == actual.end()) return fmt::format("output '{}' is missing", name);
    if (auto why =
            compare_outputs(it->second, tensor, tolerance.rtol, 1e-4, tolerance.relative_rms)) {
      return fmt::format("output '{}': {}", name, *why);
    }
  }
  return std::nullopt;
}

std::map<std::string, Tensor> run_checked(const Graph& graph, Executor& executor,
                                          const std::map<std::string, Tensor>& inputs) {
  std::map<std::string, Tensor> outputs = executor.run(inputs);
  std::set<std::string> by_region;
  std::map<std::string, Tensor> checked;
  for (const Node& node : graph.nodes()) {
    if (!is_runtime_shaped_region(node)) continue;
    for (ValueId id : node.outputs) by_region.insert(graph.value(id).name);
    for (ValueId id : node.inputs) {
      if (id == kNoValue || graph.value(id).is_constant()) continue;
      const std::string& name = graph.value(id).name;
      if (const Tensor* value = executor.last_value(name)) {
        checked.emplace("read by the region: " + name, value->clone());
      }
    }
  }
  for (auto& [name, tensor] : outputs) {
    if (!by_region.contains(name)) checked.emplace(name, std::move(tensor));
  }
  return checked;
}

std::vector<EvaluatedPlan> evaluate_plans(const Graph& graph, const std::vector<Plan>& plans,
                                          int threads, int rounds, int warmup, int chunks,
                                          const std::function<void(int)>& between) {
  std::map<std::string, Tensor> inputs = random_inputs(graph);
  // For each plan, the first plan with its partitions (itself when none
  // before), and its executor's index: one executor per distinct plan.
  std::vector<std::size_t> first(plans.size());
  std::vector<std::size_t> slot(plans.size());
  std::map<std::string, std::size_t> seen;
  std::vector<Executor> executors;
  executors.reserve(plans.size());
  for (std::size_t i = 0; i < plans.size(); ++i) {
    auto [it, added] = seen.emplace(plans[i].partitions_signature(), i);
    first[i] = it->second;
    if (added) {
      slot[i] = executors.size();
      executors.push_back(compile_plan(graph, plans[i], BackendRegistry::global(), threads));
    } else {
      slot[i] = slot[first[i]];
    }
  }
  std::vector<EvaluatedPlan> results;
  std::map<std::string, Tensor> reference;
  const PlanTolerance tolerance = plan_output_tolerance(graph);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    EvaluatedPlan evaluated{plans[i], {}, std::nullopt, ""};
    if (first[i] != i) {
      evaluated.mismatch = results[first[i]].mismatch;
      evaluated.same_as = plans[first[i]].label();
      results.push_back(std::move(evaluated));
      continue;
    }
    std::map<std::string, Tensor> outputs = run_checked(graph, executors[slot[i]], inputs);
    if (i == 0) {
      for (auto& [name, tensor] : outputs) reference.emplace(name, tensor.clone());
    } else {
      evaluated.mismatch = outputs_differ(outputs, reference, tolerance);
    }
    results.push_back(std::move(evaluated));
  }
  std::vector<std::function<void()>> variants;
  for (Executor& executor : executors) {
    variants.push_back([&executor, &inputs] { executor.run(inputs); });
  }
  chunks = between ? std::clamp(chunks, 1, rounds) : 1;
  std::vector<std::vector<double>> samples(variants.size());
  for (int chunk = 0; chunk < chunks; ++chunk) {
    if (between) between(chunk);
    const int chunk_rounds = rounds * (chunk + 1) / chunks - rounds * chunk / chunks;
    // Settling before each timed run (kPlanSettleSeconds) brings a plan back to
    // its steady state after whatever ran between the chunks.
    std::vector<TimingResult> part =
        time_interleaved(variants, chunk_rounds, chunk == 0 ? warmup : 0, 1, kPlanSettleSeconds);
    for (std::size_t v = 0; v < variants.size(); ++v) {
      samples[v].insert(samples[v].end(), part[v].sample_seconds.begin(),
                        part[v].sample_seconds.end());
    }
  }
  std::vector<TimingResult> timings;
  for (std::vector<double>& taken : samples) timings.push_back(summarize(std::move(taken)));
  for (std::size_t i = 0; i < results.size(); ++i) {
    results[i].timing = timings[slot[i]];
    results[i].plan.measured_ms = results[i].timing.median_seconds * 1e3;
  }
  return results;
}

void time_near_ties_again(const Graph& graph, std::vector<EvaluatedPlan>& evaluated, int threads,
                          int rounds) {
  auto counts = [](const EvaluatedPlan& e) { return !e.mismatch && e.same_as.empty(); };
  double fastest = 0;
  for (const EvaluatedPlan& e : evaluated) {
    if (counts(e) && (fastest == 0 || e.timing.median_seconds < fastest)) {
      fastest = e.timing.median_seconds;
    }
  }
  std::vector<std::size_t> near;
  for (std::size_t i = 0; i < evaluated.size(); ++i) {
    if (counts(evaluated[i]) && evaluated[i].timing.median_seconds <= fastest * (1 + kNearTie)) {
      near.push_back(i);
    }
  }
  if (near.size() < 2) return;
  std::vector<Plan> plans;
  for (std::size_t i : near) plans.push_back(evaluated[i].plan);
  // Their outputs were checked against the reference already: only the
  // timings are taken from this run.
  std::vector<EvaluatedPlan> again = evaluate_plans(graph, plans, threads, rounds, 1);
  std::map<std::string, const TimingResult*> by_label;
  for (std::size_t k = 0; k < near.size(); ++k) {
    EvaluatedPlan& e = evaluated[near[k]];
    std::vector<double> pooled = e.timing.sample_seconds;
    const std::vector<double>& more = again[k].timing.sample_seconds;
    pooled.insert(pooled.end(), more.begin(), more.end());
    e.timing = summarize(std::move(pooled));
    e.plan.measured_ms = e.timing.median_seconds * 1e3;
    e.timed_again = true;
    by_label.emplace(e.plan.label(), &e.timing);
  }
  for (EvaluatedPlan& e : evaluated) {
    auto it = by_label.find(e.same_as);
    if (e.same_as.empty() || it == by_label.end()) continue;
    e.timing = *it->second;
    e.plan.measured_ms = e.timing.median_seconds * 1e3;
    e.timed_again = true;
  }
}

std::string describe_evaluated(const EvaluatedPlan& evaluated) {
  return fmt::format(
      "{:<18} {:>9.3f} ms{}{}{}", evaluated.plan.label(), evaluated.timing.median_seconds * 1e3,
      evaluated.timed_again ? fmt::format("  (near the fastest: {} runs)", evaluated.timing.samples)
                            : "",
      evaluated.same_as.empty() ? "" : "  (same plan as " + evaluated.same_as + ")",
      evaluated.mismatch ? "  (outputs differ: " + *evaluated.mismatch + ")" : "");
}

std::vector<PlanStrategyTiming> strategy_timings(const std::vector<EvaluatedPlan>& evaluated) {
  std::vector<PlanStrategyTiming> rows;
  for (const EvaluatedPlan& e : evaluated) {
    rows.push_back(PlanStrategyTiming{e.plan.label(), e.timing.median_seconds * 1e3,
                                      e.timing.p10_seconds * 1e3, e.timing.p90_seconds * 1e3,
                                      !e.mismatch.has_value()});
  }
  return rows;
}

KeptPlan keep_faster_plan(const std::vector<EvaluatedPlan>& evaluated) {
  auto is_baseline = [&](std::size_t i) {
    const std::string& name = evaluated[i].plan.strategy;
    return i == 0 || name == "native" || name.rfind("single:", 0) == 0;
  };
  KeptPlan kept;
  kept.searched = evaluated.size();
  // The searched plan: the fastest collage entry whose outputs match (the
  // search's plan may be there in more than one compute layout).
  auto better_searched = [&](std::size_t i) {
    if (kept.searched == evaluated.size()) return true;
    const EvaluatedPlan& now = evaluated[kept.searched];
    if (evaluated[i].mismatch) return false;
    return now.mismatch.has_value() ||
           evaluated[i].timing.median_seconds < now.timing.median_seconds;
  };
  for (std::size_t i = 0; i < evaluated.size(); ++i) {
    if (evaluated[i].plan.strategy == "collage" && better_searched(i)) kept.searched = i;
    if (i == 0 || !is_baseline(i) || evaluated[i].mismatch) continue;
    if (evaluated[i].timing.median_seconds < evaluated[kept.best_baseline].timing.median_seconds) {
      kept.best_baseline = i;
    }
  }
  assert(kept.searched < evaluated.size() && "keep_faster_plan needs a collage plan");
  const EvaluatedPlan& searched = evaluated[kept.searched];
  const EvaluatedPlan& baseline = evaluated[kept.best_baseline];
  kept.kept = kept.searched;
  if (searched.mismatch) {
    kept.reason = KeptPlan::Reason::kSearchedMismatch;
    kept.kept = kept.best_baseline;
  } else if (searched.timing.median_seconds > baseline.timing.median_seconds) {
    kept.reason = KeptPlan::Reason::kBaselineFaster;
    kept.kept = kept.best_baseline;
  }
  return kept;
}

std::string describe_kept_plan(const KeptPlan& kept, const std::vector<EvaluatedPlan>& evaluated) {
  const EvaluatedPlan& searched = evaluated[kept.searched];
  const EvaluatedPlan& best = evaluated[kept.best_baseline];
  switch (kept.reason) {
    case KeptPlan::Reason::kSearchedMismatch:
      return fmt::format("the searched plan's outputs differ from native ({}); keeping {} instead",
                         *searched.mismatch, best.plan.label());
    case KeptPlan::Reason::kBaselineFaster:
      return fmt::format(
          "the searched plan measured {:.3f} ms, slower than {} at {:.3f} ms; keeping {}",
          searched.timing.median_seconds * 1e3, best.plan.label(), best.timing.median_seconds * 1e3,
          best.plan.label());
    case KeptPlan::Reason::kSearchedIsFastest:
      break;
  }
  if (!searched.same_as.empty() && searched.same_as == best.plan.label()) {
    return fmt::format(
        "measured end to end: {:.3f} ms (estimated {:.3f} ms); the searched plan is {}'s own",
        searched.timing.median_seconds * 1e3, searched.plan.estimated_ms.value_or(0),
        best.plan.label());
  }
  return fmt::format("measured end to end: {:.3f} ms (estimated {:.3f} ms), {:.2f}x faster than {}",
                     searched.timing.median_seconds * 1e3, searched.plan.estimated_ms.value_or(0),
                     best.timing.median_seconds / searched.timing.median_seconds,
                     best.plan.label());
}

}  // namespace collage
