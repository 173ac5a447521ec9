#include "collage/session/shape_plans.h"

#include <gtest/gtest.h>

namespace collage {
namespace {

// Plans fixing `ids` at [1, length] for each length.
std::vector<Plan> plans_for_lengths(const std::vector<std::int64_t>& lengths) {
  std::vector<Plan> plans;
  for (std::int64_t length : lengths) {
    Plan plan;
    plan.input_shapes["ids"] = {1, length};
    plan.input_shapes["mask"] = {1, length};
    plans.push_back(plan);
  }
  return plans;
}

TEST(ShapePlansTest, ThePlanMadeForTheShapesIsFound) {
  const std::vector<Plan> plans = plans_for_lengths({16, 32, 64});
  EXPECT_EQ(plan_for_shapes(plans, {{"ids", {1, 32}}, {"mask", {1, 32}}}), 1u);
  // Shapes given for some inputs only, or for inputs no plan fixes, still match.
  EXPECT_EQ(plan_for_shapes(plans, {{"ids", {1, 64}}}), 2u);
  EXPECT_EQ(plan_for_shapes(plans, {{"ids", {1, 16}}, {"other", {3}}}), 0u);
  EXPECT_EQ(plan_for_shapes(plans, {}), 0u);
  EXPECT_FALSE(plan_for_shapes(plans, {{"ids", {1, 40}}, {"mask", {1, 40}}}));
  EXPECT_FALSE(plan_for_shapes(plans, {{"ids", {1, 32}}, {"mask", {1, 16}}}));
}

TEST(ShapePlansTest, TheClosestPlanIsTheNearestInRatio) {
  const std::vector<Plan> plans = plans_for_lengths({16, 32, 64});
  EXPECT_EQ(closest_plan(plans, {{"ids", {1, 40}}, {"mask", {1, 40}}}), 1u);
  EXPECT_EQ(closest_plan(plans, {{"ids", {1, 50}}, {"mask", {1, 50}}}), 2u);
  EXPECT_EQ(closest_plan(plans, {{"ids", {1, 2}}}), 0u);
  EXPECT_EQ(closest_plan(plans, {{"ids", {1, 1000}}}), 2u);
  // A rank the plans do not have makes no plan closer than another.
  EXPECT_EQ(closest_plan(plans, {{"ids", {1, 40, 1}}}), 0u);
}

TEST(ShapePlansTest, ShapesAreWrittenAsTheCommandLineTakesThem) {
  EXPECT_EQ(shapes_text({{"ids", {1, 16}}, {"mask", {1, 16}}}), "ids=[1,16] mask=[1,16]");
}

}  // namespace
}  // namespace collage
