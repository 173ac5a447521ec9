#include "evaluation.h"

#include <fmt/format.h>

#include <functional>

#include "collage/backends/registry.h"
#include "collage/cost/measurer.h"
#include "collage/plan/plan_compiler.h"
#include "collage/runtime/interleaved_timing.h"
#include "collage/runtime/random_inputs.h"

namespace collage::cli {

std::map<std::string, Tensor> model_inputs(const Graph& graph) { return random_inputs(graph); }

std::vector<EvaluatedPlan> evaluate_plans(const Graph& graph, const std::vector<Plan>& plans,
                                          int threads, int rounds, int warmup) {
  std::map<std::string, Tensor> inputs = model_inputs(graph);
  std::vector<Executor> executors;
  executors.reserve(plans.size());
  for (const Plan& plan : plans) {
    executors.push_back(compile_plan(graph, plan, BackendRegistry::global(), threads));
  }
  std::vector<EvaluatedPlan> results;
  std::map<std::string, Tensor> reference;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    EvaluatedPlan evaluated{plans[i], {}, std::nullopt};
    std::map<std::string, Tensor> outputs = executors[i].run(inputs);
    if (i == 0) {
      for (auto& [name, tensor] : outputs) reference.emplace(name, tensor.clone());
    } else {
      for (const auto& [name, expected] : reference) {
        if (auto why = compare_outputs(outputs.at(name), expected, 1e-3, 1e-4)) {
          evaluated.mismatch = fmt::format("output '{}': {}", name, *why);
          break;
        }
      }
    }
    results.push_back(std::move(evaluated));
  }
  std::vector<std::function<void()>> variants;
  for (Executor& executor : executors) {
    variants.push_back([&executor, &inputs] { executor.run(inputs); });
  }
  std::vector<TimingResult> timings = time_interleaved(variants, rounds, warmup);
  for (std::size_t i = 0; i < results.size(); ++i) {
    results[i].timing = timings[i];
    results[i].plan.measured_ms = timings[i].median_seconds * 1e3;
  }
  return results;
}

}  // namespace collage::cli
