// PlanJson: a Plan as JSON, the on-disk form of `collage tune -o` and
// `collage run --plan` (schema in docs/plan-format.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "collage/plan/plan.h"

namespace collage {

inline constexpr int kPlanFormatVersion = 1;

nlohmann::json plan_to_json(const Plan& plan);
// Throws Error (with `source` as the file) when the JSON is not a valid plan.
Plan plan_from_json(const nlohmann::json& json, const std::string& source = "plan");

void save_plan(const Plan& plan, const std::string& path);
// Throws Error naming the file when it is missing, not JSON, or not a plan.
Plan load_plan(const std::string& path);

}  // namespace collage
