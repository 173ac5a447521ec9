// Plan compilation: a Plan and its model become a runnable Executor.
//
// Each partition's nodes are looked up by name in the canonical graph,
// extracted, and compiled once with the partition's backend. A plan that
// does not fit the model (another model, other input shapes, a backend this
// build lacks, a partition the backend now refuses) is an Error that says
// which partition and why, never a crash at run time.
#pragma once

#include "collage/backends/registry.h"
#include "collage/ir/graph.h"
#include "collage/plan/plan.h"
#include "collage/runtime/executor.h"

namespace collage {

// Throws Error when the plan does not fit `model` or a partition does not compile.
// A 4-D boundary value produced and read only by partitions of backends that
// accept channels-last edges (XNNPACK) is exchanged in NHWC order, so it is
// converted where the layout family changes, not at both ends.
Executor compile_plan(const Graph& model, const Plan& plan, const BackendRegistry& registry,
                      int threads);

// Per model value: whether compile_plan exchanges it channels-last between
// the partitions (nodes per partition, and each partition's backend).
std::vector<bool> channels_last_values(const Graph& model,
                                       const std::vector<std::vector<NodeId>>& partition_nodes,
                                       const std::vector<const Backend*>& backends);

// Throws Error when the plan was made for another model (structural hash),
// or records no model hash.
void check_plan_matches(const Graph& model, const Plan& plan, const std::string& plan_file);

}  // namespace collage
