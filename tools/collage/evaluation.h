// Evaluation: plans run end to end, side by side.
//
// Compiles each plan, runs all of them on the same inputs, checks every
// plan's outputs against the first (the native reference), and times them
// interleaved (A B C A B C ...) so that machine drift hits all alike. Used by
// `tune` (is the searched plan really faster than each single backend?) and
// `compare` (the table).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collage/ir/graph.h"
#include "collage/plan/plan.h"
#include "collage/runtime/timing.h"

namespace collage::cli {

struct EvaluatedPlan {
  Plan plan;
  TimingResult timing;
  // Why the outputs differ from the reference plan's, if they do.
  std::optional<std::string> mismatch;
};

// Deterministic random inputs for every model input.
std::map<std::string, Tensor> model_inputs(const Graph& graph);

// `plans[0]` is the reference for the output check. Throws Error if a plan
// does not compile.
std::vector<EvaluatedPlan> evaluate_plans(const Graph& graph, const std::vector<Plan>& plans,
                                          int threads, int rounds, int warmup);

}  // namespace collage::cli
