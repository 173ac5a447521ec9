// Plan reports: a Plan as text for a terminal, or as a Graphviz drawing.
//
// The text lists partitions in execution order with backend, ops, boundary
// values, estimated cost and the alternatives the search weighed against
// each one, so a user can see why it won. The drawing shows the model's
// nodes clustered by partition and coloured by backend; without the model it
// falls back to one box per partition, connected by the values between them.
#pragma once

#include <optional>
#include <string>

#include "collage/ir/graph.h"
#include "collage/plan/plan.h"

namespace collage {

// With `model` (the plan's canonical graph; may be null), each partition
// also lists what the bodies of its nodes hold: an If's branches, a Loop's
// or Scan's body, a runtime-shaped region's nodes, nested bodies indented.
std::string plan_to_text(const Plan& plan, const Graph* model = nullptr);

// Whether a partition of `plan` holds a node with bodies (If, Loop, Scan,
// a runtime-shaped region), by its ops: the reports need the model then.
bool plan_has_bodies(const Plan& plan);

// "onednn 9, native 3": how many of the plan's partitions compute on 8-bit
// values (hold a quantized op such as QLinearConv), per backend; "" when
// none do.
std::string int8_partitions_text(const Plan& plan);

// For each partition of `plan`, whether a pin of its placement
// (Plan::placement, "place ...") names one of its nodes.
std::vector<bool> pinned_partitions(const Plan& plan);

// `model` may be null (partitions only). A node with bodies is drawn as a
// cluster around the node and a cluster per body holding its nodes.
std::string plan_to_dot(const Plan& plan, const Graph* model);

// Milliseconds as a report column: "1.234", or "-" when there is no value.
std::string ms_column(const std::optional<double>& milliseconds);

// `text` cut to `width` characters, ending in "..." when it was cut.
std::string shorten(const std::string& text, std::size_t width);

// The fill colour of a backend (Backend::report_color), the same in every
// drawing; white for a backend this build lacks.
std::string backend_color(const std::string& backend);

}  // namespace collage
