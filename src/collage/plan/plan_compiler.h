// Plan compilation: a Plan and its model become a runnable Executor.
//
// Each partition's nodes are looked up by name in the canonical graph,
// extracted, and compiled once with the partition's backend. A plan that
// does not fit the model (another model, other input shapes, a backend this
// build lacks, a partition the backend now refuses) is an Error that says
// which partition and why, never a crash at run time.
#pragma once

#include <optional>
#include <vector>

#include "collage/backends/registry.h"
#include "collage/ir/graph.h"
#include "collage/plan/plan.h"
#include "collage/runtime/executor.h"

namespace collage {

// Throws Error when the plan does not fit `model` or a partition does not compile.
// Boundary values are exchanged in the layout negotiate_edge_layouts picks,
// so a value is converted where the layout family changes, not at both ends.
// A backend the plan names in compute_layouts compiles its partitions with
// that CompileOptions::compute_layout (an unknown layout name is an Error).
Executor compile_plan(const Graph& model, const Plan& plan, const BackendRegistry& registry,
                      int threads);

// Per model value: the layout compile_plan exchanges it in between the
// partitions (nodes per partition, and each partition's backend). A value
// that crosses a boundary, is not a model output and fits the layout
// (edge_layout_fits) gets the first of its producer's edge_layouts() that
// every reader's backend accepts (oneDNN hands over the layout its
// convolutions compute in, XNNPACK its NHWC), or the layout the producing
// partition was asked to compute in (`compute_layouts`, per partition; empty:
// none) where that fits; every other value is plain.
std::vector<EdgeLayout> negotiate_edge_layouts(
    const Graph& model, const std::vector<std::vector<NodeId>>& partition_nodes,
    const std::vector<const Backend*>& backends,
    const std::vector<std::optional<EdgeLayout>>& compute_layouts = {});

// Throws Error when the plan was made for another model (structural hash),
// or records no model hash.
void check_plan_matches(const Graph& model, const Plan& plan, const std::string& plan_file);

}  // namespace collage
