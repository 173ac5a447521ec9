// Body planning: the bodies of control-flow nodes planned as graphs of
// their own.
//
// An If's branches and a Loop's or Scan's body run inside their node, which
// only the native backend runs. Their work (an LSTM in a branch, a GEMM per
// iteration) need not stay native: each typed body that a backend of the
// run other than native could take part of is planned with the strategy of
// the enclosing plan, as a graph whose inputs are the body's (its captured
// values included). The collage strategy searches and measures it like a
// model (its candidates go through the measurement cache like any other),
// then runs it beside the baselines on random inputs and keeps the faster
// plan whose outputs match native's, so a branch the sample input never
// takes is planned and checked all the same. The user's placement rules
// hold in bodies too (a pin of a node the body lacks pins nothing there).
// A body whose plan is native
// alone, or that could not be planned, runs natively. The plans ride in
// Plan::bodies, and compile_plan runs each body by its plan; under the
// collage strategy the partitions holding planned bodies are then
// estimated by running them so (charge_planned_bodies).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "collage/ir/graph.h"
#include "collage/plan/plan.h"
#include "collage/session/planning_options.h"

namespace collage {

// Plans `body` (a graph of its own) under `options`, whose body_path leads
// to it.
using BodyPlanner = std::function<Plan(const Graph& body, const PlanningOptions& options)>;

// The plans of the bodies of `graph`'s control-flow nodes (not those of a
// runtime-shaped region, which runs its nodes one by one) that one of
// `backends` other than native supports a node of, made by `planner`. A
// body whose plan is native alone is left out; one whose planning fails is
// left out with a progress line saying why.
std::vector<PlanBody> plan_bodies(const Graph& graph, const PlanningOptions& options,
                                  const std::vector<std::string>& backends,
                                  const BodyPlanner& planner);

// Charges `plan` (of `graph`) for its planned bodies. The search measured
// each control-flow node's partition with native bodies; the plan is run
// with its planned bodies on random inputs, and each partition that holds
// a node with a planned body is estimated at its time in those runs (the
// plan's estimate moves with it). A plan that fails to compile or run so
// keeps its estimates, with a progress line.
void charge_planned_bodies(const Graph& graph, Plan& plan, const PlanningOptions& options);

// The graph `path` (PlanningOptions::body_path) leads to from `model`;
// Error when a step names no control-flow node or no body of it.
const Graph& follow_body_path(const Graph& model,
                              const std::vector<std::pair<std::string, std::size_t>>& path);

}  // namespace collage
