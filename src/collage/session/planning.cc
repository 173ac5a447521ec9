#include "collage/session/planning.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "collage/backends/registry.h"
#include "collage/ir/runtime_shapes.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/plan/plan_builder.h"
#include "collage/search/local_moves.h"
#include "collage/search/regions.h"
#include "collage/session/body_planning.h"
#include "collage/session/tuner.h"
#include "collage/session/tuning.h"

namespace collage {
namespace {

// Interleaved end-to-end runs per plan when a body's plan is verified.
constexpr int kBodyVerifyRepeat = 5;

// The native strategy: the whole model as one native partition, so the
// native backend fuses across the whole graph and no boundary is crossed.
// A runtime-shaped region (ir/runtime_shapes.h) is a partition of its own,
// between what it does not depend on and what depends on it, so that the
// values it reads can be checked against other plans' (run_checked in
// session/evaluation.h).
Plan whole_graph_plan(const DataflowGraph& dfg, const Backend& native, const Strategy& strategy,
                      const PlanningOptions& options) {
  const IndexSet operators = IndexSet::all(dfg.size()) - dfg.host_set();
  PartitionSpecPtr spec = make_backend_spec(native, spec_options(options.search));
  std::vector<IndexSet> parts = {operators};
  for (PostDfsIndex index : operators) {
    if (!is_runtime_shaped_region(dfg.node(index))) continue;
    IndexSet region = dfg.empty_set();
    region.add(index);
    const IndexSet after = dfg.downstream_of(index) & operators;
    parts = {operators - after - region, region, after};
    break;
  }
  std::vector<ChosenPartition> chosen;
  for (const IndexSet& part : parts) {
    if (part.empty()) continue;
    CandidatePartition whole{SubGraph(dfg, part, "whole graph"), spec, "whole-graph"};
    chosen.push_back(ChosenPartition{whole, Cost::zero()});
  }
  Plan plan = build_plan(dfg, chosen, plan_context(strategy, options));
  plan.backend_versions[native.name()] = native.version();
  return plan;
}

// The greedy strategies (`single:<b>`, `greedy:<b1>,<b2>`): greedy_cover()
// in the strategy's order of backends, native covering what is left, its
// partitions merged into maximal regions (search/regions.h). Under
// placement constraints every backend offers only what it may run, and the
// nodes pinned to a backend the strategy does not name go to that backend
// first; the native strategy is then this with no backend of its own.
Plan greedy_plan(const DataflowGraph& dfg, const Backend& native, const Strategy& strategy,
                 const PlanningOptions& options) {
  PartitionSpecPtr fallback = planning_specs({&native}, options).front();
  std::vector<PartitionSpecPtr> named;
  for (const Backend* backend : resolve_backends(strategy.backends)) {
    if (backend != &native) named.push_back(planning_specs({backend}, options).front());
  }
  std::vector<PartitionSpecPtr> priority = options.placement.baseline_priority(
      planning_specs(resolve_backends(options.backends), options), named, native.name());
  std::vector<ChosenPartition> chosen =
      merge_into_regions(dfg, greedy_cover(dfg, priority, fallback));
  Plan plan = build_plan(dfg, chosen, plan_context(strategy, options));
  for (const PartitionSpecPtr& spec : priority) {
    plan.backend_versions[spec->name] = spec->backend->version();
  }
  plan.backend_versions[native.name()] = native.version();
  return plan;
}

}  // namespace

const Plan& lowest_estimate(const std::vector<Plan>& plans) {
  auto estimate = [](const Plan& plan) {
    return plan.estimated_ms.value_or(std::numeric_limits<double>::infinity());
  };
  return *std::min_element(plans.begin(), plans.end(),
                           [&](const Plan& a, const Plan& b) { return estimate(a) < estimate(b); });
}

std::vector<Plan> searched_plans(const Graph& graph, const PlanningOptions& options) {
  // A body is checked as part of its model.
  if (options.body_path.empty()) check_placement(graph, options);
  const DataflowGraph dfg(graph);
  const Strategy strategy = Strategy::parse("collage");
  const std::vector<std::optional<EdgeLayout>> layouts = search_layouts(graph, options);
  std::vector<Plan> plans;
  for (const std::optional<EdgeLayout>& layout : layouts) {
    PlanningOptions searching = options;
    searching.search_layout = layout;
    if (options.progress && layouts.size() > 1) {
      options.progress(TuneProgress{
          .stage = TuneProgress::Stage::kLayout,
          .message = fmt::format("searching in {} ({} of {} layouts)",
                                 layout ? edge_layout_name(*layout) : "each backend's own layout",
                                 plans.size() + 1, layouts.size())});
    }
    Plan plan = Tuner(graph, dfg, strategy, searching).run();
    if (layouts.size() > 1) plan.search.layout = layout ? edge_layout_name(*layout) : "own";
    // Each body is tuned like a model: searched, then run beside the
    // baselines and kept only when faster (session/tuning.h).
    plan.bodies = plan_bodies(
        graph, options, options.backends,
        [](const Graph& body, const PlanningOptions& body_options) {
          return tune_model(body, body_options, {.verify = true, .repeat = kBodyVerifyRepeat}).kept;
        });
    if (!plan.bodies.empty()) charge_planned_bodies(graph, plan, options);
    plans.push_back(std::move(plan));
  }
  return plans;
}

Plan make_plan(const Graph& graph, const Strategy& strategy, const PlanningOptions& options) {
  // searched_plans checks the placement and builds its own dataflow graph.
  if (strategy.kind == Strategy::Kind::kCollage) {
    return lowest_estimate(searched_plans(graph, options));
  }
  // A body is checked as part of its model.
  if (options.body_path.empty()) check_placement(graph, options);
  DataflowGraph dfg(graph);
  const Backend& native = BackendRegistry::global().native();
  const bool all_native =
      std::all_of(graph.nodes().begin(), graph.nodes().end(),
                  [&](const Node& node) { return options.placement.admits(node, native.name()); });
  if (strategy.kind == Strategy::Kind::kNative && all_native) {
    return whole_graph_plan(dfg, native, strategy, options);
  }
  Plan plan = greedy_plan(dfg, native, strategy, options);
  plan.bodies = plan_bodies(graph, options, strategy.backends,
                            [&strategy](const Graph& body, const PlanningOptions& body_options) {
                              return make_plan(body, strategy, body_options);
                            });
  return plan;
}

}  // namespace collage
