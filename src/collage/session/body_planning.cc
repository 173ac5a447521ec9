#include "collage/session/body_planning.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "collage/backends/registry.h"
#include "collage/ir/control_flow.h"
#include "collage/ir/error.h"
#include "collage/ir/runtime_shapes.h"
#include "collage/plan/plan_compiler.h"
#include "collage/runtime/random_inputs.h"
#include "collage/runtime/timing.h"

namespace collage {
namespace {

// Whether one of `others` supports a node of `graph` or of its bodies.
bool others_take_part(const Graph& graph, const std::vector<const Backend*>& others) {
  bool any = false;
  for_each_body_node(graph, [&](const Graph& holder, const Node& node) {
    if (any || is_control_flow(node)) return;
    for (const Backend* backend : others) {
      if (backend->supports(holder, node)) {
        any = true;
        return;
      }
    }
  });
  return any;
}

void report(const PlanningOptions& options, const std::string& message) {
  if (options.progress) {
    options.progress(TuneProgress{.stage = TuneProgress::Stage::kBody, .message = message});
  }
}

bool native_alone(const Plan& plan) {
  for (const PlanPartition& partition : plan.partitions) {
    if (partition.backend != "native") return false;
  }
  for (const PlanBody& body : plan.bodies) {
    if (!native_alone(body.plan)) return false;
  }
  return true;
}

}  // namespace

std::vector<PlanBody> plan_bodies(const Graph& graph, const PlanningOptions& options,
                                  const std::vector<std::string>& backends,
                                  const BodyPlanner& planner) {
  std::vector<const Backend*> others;
  for (const Backend* backend : resolve_backends(backends)) {
    if (backend->name() != "native") others.push_back(backend);
  }
  std::vector<PlanBody> planned;
  if (others.empty()) return planned;
  for (const Node& node : graph.nodes()) {
    if (!is_control_flow(node) || is_runtime_shaped_region(node)) continue;
    const std::vector<const Graph*> node_bodies = bodies(node);
    const std::vector<std::string> names = body_names(node);
    for (std::size_t index = 0; index < node_bodies.size(); ++index) {
      const Graph& body = *node_bodies[index];
      if (!is_typed(body) || body.num_nodes() == 0 || !others_take_part(body, others)) continue;
      const std::string name = index < names.size() ? names[index] : "body";
      const std::string what = fmt::format("{} of {} {}", name, node.op_type, node.name);
      PlanningOptions body_options = options;
      body_options.body_path.emplace_back(node.name, index);
      report(options, fmt::format("body: planning {} ({} nodes)", what, body.num_nodes()));
      try {
        Plan plan = planner(body, body_options);
        if (native_alone(plan)) {
          report(options, fmt::format("body: {} stays native", what));
          continue;
        }
        report(options,
               fmt::format("body: {} planned: {}", what, plan.partitions_per_backend_text()));
        planned.push_back(PlanBody{node.name, index, name, std::move(plan)});
      } catch (const Error& error) {
        report(options, fmt::format("body: {} stays native: {}", what, error.what()));
      }
    }
  }
  return planned;
}

void charge_planned_bodies(const Graph& graph, Plan& plan, const PlanningOptions& options) {
  // Runs after the untimed ones; each is a model run.
  constexpr int kWarmup = 3;
  constexpr int kRuns = 20;
  std::set<std::string> planned_nodes;
  for (const PlanBody& body : plan.bodies) planned_nodes.insert(body.node);
  std::vector<std::size_t> holders;
  for (std::size_t p = 0; p < plan.partitions.size(); ++p) {
    const PlanPartition& partition = plan.partitions[p];
    if (!partition.estimated_ms) continue;
    if (std::any_of(partition.nodes.begin(), partition.nodes.end(),
                    [&](const std::string& node) { return planned_nodes.count(node) > 0; })) {
      holders.push_back(p);
    }
  }
  if (holders.empty() || !plan.estimated_ms) return;
  std::vector<std::vector<double>> seconds(holders.size());
  try {
    Executor executor = compile_plan(graph, plan, BackendRegistry::global(), options.threads);
    const std::map<std::string, Tensor> inputs = random_inputs(graph);
    for (int run = 0; run < kWarmup + kRuns; ++run) {
      executor.run(inputs);
      if (run < kWarmup) continue;
      for (std::size_t i = 0; i < holders.size(); ++i) {
        seconds[i].push_back(executor.last_partition_seconds()[holders[i]]);
      }
    }
  } catch (const Error& error) {
    report(options, fmt::format("body: the plan keeps its estimate; running it with its planned "
                                "bodies failed: {}",
                                error.what()));
    return;
  }
  for (std::size_t i = 0; i < holders.size(); ++i) {
    PlanPartition& partition = plan.partitions[holders[i]];
    // What a part adds to a whole (runtime/timing.h).
    const double charged = 1e3 * trimmed_mean(seconds[i]);
    *plan.estimated_ms += charged - *partition.estimated_ms;
    partition.estimated_ms = charged;
  }
}

const Graph& follow_body_path(const Graph& model,
                              const std::vector<std::pair<std::string, std::size_t>>& path) {
  const Graph* graph = &model;
  for (const auto& [name, index] : path) {
    std::optional<NodeId> found = graph->find_node(name);
    if (!found || !is_control_flow(graph->node(*found))) {
      throw Error("names no control-flow node of the model", {.field = "--body " + name});
    }
    const std::vector<const Graph*> node_bodies = bodies(graph->node(*found));
    if (index >= node_bodies.size()) {
      throw Error(fmt::format("the node has {} bodies", node_bodies.size()),
                  {.field = "--body " + name});
    }
    graph = node_bodies[index];
  }
  return *graph;
}

}  // namespace collage
