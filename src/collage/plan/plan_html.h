// The plan as one self-contained HTML page (`collage show PLAN --format
// html`): the model's graph drawn with each partition coloured by backend
// (Graphviz's drawing of plan_to_dot, inlined); on selecting a partition,
// its nodes, estimate, in-context time, the alternatives the search weighed
// it against and its boundaries; a bar chart of the strategies measured
// end to end; and one run's timeline from a profile. No network: the
// styles, the script and the data are in the file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collage/plan/plan.h"
#include "collage/plan/plan_profile.h"
#include "collage/runtime/trace.h"

namespace collage {

struct HtmlReport {
  Plan plan;
  // Graphviz's SVG of plan_to_dot(plan, ...): each partition's cluster (or
  // box) has the id "partition_<index>". Empty: no drawing.
  std::string graph_svg;
  // From `collage run --plan PLAN --profile FILE`, when given.
  std::optional<PlanProfile> profile;
  std::vector<TraceSpan> spans;
  // The strategies measured end to end (the plan's own verification, or
  // compare's --json); empty: no chart.
  std::vector<PlanStrategyTiming> strategies;
};

std::string plan_to_html(const HtmlReport& report);

// `text` with &, <, >, " and ' escaped for HTML text and attributes.
std::string html_escape(const std::string& text);

// The strategies of compare's --json output (its "strategies" rows).
// Throws Error naming the file for anything else.
std::vector<PlanStrategyTiming> read_compare_json(const std::string& path);

}  // namespace collage
