// Partition order: the graph whose nodes are whole partitions.
//
// Each chosen partition runs as one kernel, so it can start only when every
// partition feeding it has finished. That makes the partitions themselves a
// dataflow graph (the quotient of the node graph), and it must be acyclic:
// two partitions that are each convex can still feed each other (a1 -> b1 in
// one direction, b2 -> a2 in the other). The search rejects such choices,
// coalescing must not create them, and the executor runs partitions in the
// order computed here.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "collage/partition/dataflow_graph.h"
#include "collage/partition/index_set.h"

namespace collage {

// The partitions (disjoint inside sets) in an execution order: each after
// every partition that feeds it, directly or through nodes outside all
// partitions; among ready partitions, the one with the smallest index first.
// Nullopt when the partitions form a cycle.
std::optional<std::vector<std::size_t>> order_partitions(const DataflowGraph& dfg,
                                                         const std::vector<IndexSet>& partitions);

// Whether the partitions, each seen as one node, form a cycle.
bool partitions_form_cycle(const DataflowGraph& dfg, const std::vector<IndexSet>& partitions);

}  // namespace collage
