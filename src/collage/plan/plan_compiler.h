// Plan compilation: a Plan and its model become a runnable Executor.
//
// Each partition's nodes are looked up by name in the canonical graph,
// extracted, and compiled once with the partition's backend. A plan that
// does not fit the model (another model, other input shapes, a backend this
// build lacks, a partition the backend now refuses) is an Error that says
// which partition and why, never a crash at run time.
#pragma once

#include "collage/backends/registry.h"
#include "collage/ir/graph.h"
#include "collage/plan/plan.h"
#include "collage/runtime/executor.h"

namespace collage {

// Throws Error when the plan does not fit `model` or a partition does not compile.
Executor compile_plan(const Graph& model, const Plan& plan, const BackendRegistry& registry,
                      int threads);

// Throws Error when the plan was made for another model (structural hash),
// or records no model hash.
void check_plan_matches(const Graph& model, const Plan& plan, const std::string& plan_file);

}  // namespace collage
