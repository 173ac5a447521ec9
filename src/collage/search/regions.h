// Regions: the baselines' partitions grown to the largest regions a
// backend compiles.
//
// An execution provider of ONNX Runtime, or TVM's partition_for_*, gives a
// backend maximal connected regions of the nodes it supports and compiles
// each region as one program. The greedy baselines do the same: greedy_cover
// places the spec's bounded candidates, and merge_into_regions then joins
// touching partitions of one spec while the merge stays convex (any shape
// for a backend that compiles_regions(), the spec's merge_config for the
// others) and the partitions stay acyclic, and keeps a merged region only
// when its backend compiles it. Nothing is measured: a baseline
// is what a user of one backend would get, not a searched plan.
#pragma once

#include <vector>

#include "collage/partition/dataflow_graph.h"
#include "collage/partition/partition_spec.h"
#include "collage/search/shortest_path.h"

namespace collage {

// The shape a region of `spec` may take: any convex one for a backend that
// compiles regions, the spec's merge_config for the others.
SubGraphConfig region_config(const PartitionSpec& spec);

// `partitions` (a cover in execution order, as greedy_cover returns it) with
// touching partitions of one spec merged into regions, in an execution
// order. A region its backend does not compile is split in two, in
// execution order, until its pieces compile (a single partition of the
// cover is kept as it is). Costs are left zero, rule names are "region".
std::vector<ChosenPartition> merge_into_regions(const DataflowGraph& dfg,
                                                const std::vector<ChosenPartition>& partitions);

}  // namespace collage
