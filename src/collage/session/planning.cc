#include "collage/session/planning.h"

#include <algorithm>

#include "collage/backends/registry.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/plan/plan_builder.h"
#include "collage/search/local_moves.h"
#include "collage/search/regions.h"
#include "collage/session/tuner.h"

namespace collage {
namespace {

// The native strategy: the whole model as one native partition, so the
// native backend fuses across the whole graph and no boundary is crossed.
Plan whole_graph_plan(const DataflowGraph& dfg, const Backend& native, const Strategy& strategy,
                      const PlanningOptions& options) {
  IndexSet operators = IndexSet::all(dfg.size()) - dfg.host_set();
  PartitionSpecPtr spec = make_backend_spec(native, spec_options(options.search));
  CandidatePartition whole{SubGraph(dfg, operators, "whole graph"), spec, "whole-graph"};
  Plan plan =
      build_plan(dfg, {ChosenPartition{whole, Cost::zero()}}, plan_context(strategy, options));
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

Plan make_plan(const Graph& graph, const Strategy& strategy, const PlanningOptions& options) {
  check_placement(graph, options);
  DataflowGraph dfg(graph);
  if (strategy.kind == Strategy::Kind::kCollage) {
    return Tuner(graph, dfg, strategy, options).run();
  }
  const Backend& native = BackendRegistry::global().native();
  const bool all_native =
      std::all_of(graph.nodes().begin(), graph.nodes().end(),
                  [&](const Node& node) { return options.placement.admits(node, native.name()); });
  if (strategy.kind == Strategy::Kind::kNative && all_native) {
    return whole_graph_plan(dfg, native, strategy, options);
  }
  return greedy_plan(dfg, native, strategy, options);
}

}  // namespace collage
