// PlanJson: a Plan as JSON, the on-disk form of `collage tune -o` and
// `collage run --plan` (schema in docs/plan-format.md).
//
// A plan file holds one plan, or, when `tune` was given several shapes for
// an input, a plan set: one plan per shape, each of the same model
// ("format": "collage-plan-set"). A plan set of one plan is written as that
// plan, so files stay readable by builds before plan sets.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collage/plan/plan.h"

namespace collage {

inline constexpr int kPlanFormatVersion = 1;

nlohmann::json plan_to_json(const Plan& plan);
// Throws Error (with `source` as the file) when the JSON is not a valid plan.
Plan plan_from_json(const nlohmann::json& json, const std::string& source = "plan");

void save_plan(const Plan& plan, const std::string& path);
// Throws Error naming the file when it is missing, not JSON, or not a plan
// (a plan set of more than one plan included).
Plan load_plan(const std::string& path);

// A plan set (one plan per input shapes); one plan alone is written in the
// form of save_plan. `plans` is not empty.
nlohmann::json plans_to_json(const std::vector<Plan>& plans);
// One plan, or every plan of a plan set, in file order. Throws Error (with
// `source` as the file) for an invalid plan, an empty set, or two plans for
// the same input shapes.
std::vector<Plan> plans_from_json(const nlohmann::json& json, const std::string& source = "plan");
void save_plans(const std::vector<Plan>& plans, const std::string& path);
std::vector<Plan> load_plans(const std::string& path);

}  // namespace collage
