// Plan building: from the partitions a strategy chose to a Plan.
//
// Fills each partition's nodes, op types and boundary values from the
// canonical graph, its estimated cost when the strategy estimated one, and
// (for the search) the runner-up alternatives of each partition.
#pragma once

#include <string>
#include <vector>

#include "collage/partition/dataflow_graph.h"
#include "collage/plan/plan.h"
#include "collage/search/collage_partitioner.h"
#include "collage/search/shortest_path.h"

namespace collage {

struct PlanContext {
  std::string strategy;
  std::string model_path;
  std::map<std::string, Shape> input_shapes;
  std::string machine;
  int threads = 1;
  // The graph optimization level the model was canonicalized with.
  std::string graph_opt = "all";
  // The user's placement constraints (Placement::describe()).
  std::vector<std::string> placement;
};

// `estimated` is empty for strategies that do not estimate; otherwise it
// holds every candidate the search considered (for alternatives).
Plan build_plan(const DataflowGraph& dfg, const std::vector<ChosenPartition>& chosen,
                const PlanContext& context, const std::vector<EstimatedCandidate>& estimated = {});

// Milliseconds of a valid cost; nullopt for an invalid one.
std::optional<double> cost_ms(const Cost& cost);

}  // namespace collage
