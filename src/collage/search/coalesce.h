// Coalescing: merging neighbouring partitions of the same backend.
//
// The search may choose two touching partitions of one backend, for
// instance when the merged region was never a candidate (a library's
// pattern matches side by side). Running them as one partition saves a
// boundary: a kernel launch, a layout conversion, a trip through memory. A
// merge must keep what every partition promises, so it is made only when the
// merged sub-graph is valid under the backend's SubGraphConfig (TVM's
// coalescing ignored it), when the partitions still form no cycle, and when
// the re-estimated merged partition is valid and no slower than the two it
// replaces.
#pragma once

#include <vector>

#include "collage/cost/cost_estimator.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/search/shortest_path.h"

namespace collage {

// `partitions` with touching partitions of the same spec merged, repeatedly,
// while merges are allowed (see above); in an execution order. Merged
// partitions get the rule name "coalesce" and the cost `estimator` gives them.
std::vector<ChosenPartition> coalesce(const DataflowGraph& dfg,
                                      std::vector<ChosenPartition> partitions,
                                      CostEstimator& estimator);

}  // namespace collage
