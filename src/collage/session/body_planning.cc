#include "collage/session/body_planning.h"

#include <fmt/format.h>

#include "collage/backends/registry.h"
#include "collage/ir/control_flow.h"
#include "collage/ir/error.h"
#include "collage/ir/runtime_shapes.h"

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
