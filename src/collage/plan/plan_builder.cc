#include "collage/plan/plan_builder.h"

#include "collage/backends/backend.h"
#include "collage/ir/structural_hash.h"
#include "collage/partition/partition_spec.h"

namespace collage {

std::optional<double> cost_ms(const Cost& cost) {
  if (!cost.is_valid()) return std::nullopt;
  return cost.seconds() * 1e3;
}

Plan build_plan(const DataflowGraph& dfg, const std::vector<ChosenPartition>& chosen,
                const PlanContext& context, const std::vector<EstimatedCandidate>& estimated) {
  const Graph& graph = dfg.graph();
  Plan plan;
  plan.strategy = context.strategy;
  plan.model_path = context.model_path;
  plan.model_hash = structural_hash_hex(graph);
  plan.input_shapes = context.input_shapes;
  plan.machine = context.machine;
  plan.threads = context.threads;
  plan.graph_opt = context.graph_opt;
  plan.placement = context.placement;
  const bool estimates = !estimated.empty();
  double total_ms = 0;
  bool all_estimated = estimates;
  for (const ChosenPartition& c : chosen) {
    PlanPartition partition;
    const PartitionSpec& spec = *c.candidate.spec;
    partition.backend = spec.name;
    if (spec.backend != nullptr) plan.backend_versions[spec.name] = spec.backend->version();
    partition.rule = c.candidate.rule_name;
    for (NodeId id : c.candidate.sub_graph.node_ids(dfg)) {
      partition.nodes.push_back(graph.node(id).name);
      partition.ops.push_back(graph.node(id).op_type);
    }
    Graph extracted = c.candidate.sub_graph.extract(dfg);
    for (ValueId id : extracted.inputs()) partition.inputs.push_back(extracted.value(id).name);
    for (ValueId id : extracted.outputs()) partition.outputs.push_back(extracted.value(id).name);
    if (estimates) {
      partition.estimated_ms = cost_ms(c.cost);
      if (partition.estimated_ms) {
        total_ms += *partition.estimated_ms;
      } else {
        all_estimated = false;
      }
      for (const EstimatedCandidate& alt : alternatives_for(dfg, c.candidate, estimated, 4)) {
        PlanAlternative alternative;
        alternative.backend = alt.candidate.spec_name();
        alternative.rule = alt.candidate.rule_name;
        alternative.node_count = static_cast<int>(alt.candidate.sub_graph.operator_count(dfg));
        alternative.estimated_ms = cost_ms(alt.cost);
        if (!alt.cost.is_valid()) alternative.reason = alt.cost.reason();
        partition.alternatives.push_back(alternative);
      }
    }
    plan.partitions.push_back(std::move(partition));
  }
  if (all_estimated) plan.estimated_ms = total_ms;
  return plan;
}

}  // namespace collage
