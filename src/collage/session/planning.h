// Planning: one place that turns a model and a strategy into a Plan.
//
// Every front end (the command line, the C++ API, the Python module) goes
// through make_plan(), so every strategy sees the same canonical graph, the
// same backend specs and the same measurement settings, and their plans are
// comparable. For the collage strategy this is the tuning run
// (session/tuner.h): candidates, measurements (in a worker process, through
// the persistent cache), search, coalescing, and refinement by profiling
// the plan in context.
#pragma once

#include <vector>

#include "collage/ir/graph.h"
#include "collage/plan/plan.h"
#include "collage/search/strategy.h"
#include "collage/session/planning_options.h"

namespace collage {

// Builds `strategy`'s plan for `graph` (the canonical graph of options.model_path).
// For the collage strategy the plan's measured_ms is its in-context time;
// searched in several layouts (searched_plans), the plan of the lowest
// estimate.
Plan make_plan(const Graph& graph, const Strategy& strategy, const PlanningOptions& options);

// The collage strategy's plans, one per layout the search measures in
// (search_layouts in session/tuning.h): one plan, unless
// options.search.layout is "each". Each such plan names its layout in
// PlanSearchStats::layout.
std::vector<Plan> searched_plans(const Graph& graph, const PlanningOptions& options);

// The plan of the lowest estimate among `plans` (not empty); one without
// an estimate counts as slowest.
const Plan& lowest_estimate(const std::vector<Plan>& plans);

}  // namespace collage
