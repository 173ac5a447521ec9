#include "collage/session/evaluation.h"

#include <gtest/gtest.h>

#include "collage/session/planning.h"

namespace collage {
namespace {

EvaluatedPlan evaluated(const std::string& strategy, double ms,
                        std::optional<std::string> mismatch = std::nullopt) {
  EvaluatedPlan e;
  e.plan.strategy = strategy;
  e.timing.median_seconds = ms * 1e-3;
  e.mismatch = std::move(mismatch);
  return e;
}

TEST(KeepFasterPlanTest, KeepsTheSearchedPlanWhenItIsTheFastest) {
  KeptPlan kept = keep_faster_plan(
      {evaluated("native", 10), evaluated("single:onednn", 8), evaluated("collage", 7)});
  EXPECT_EQ(kept.reason, KeptPlan::Reason::kSearchedIsFastest);
  EXPECT_EQ(kept.kept, 2u);
  EXPECT_EQ(kept.searched, 2u);
  EXPECT_EQ(kept.best_baseline, 1u);
}

TEST(KeepFasterPlanTest, KeepsTheFastestBaselineWhenTheSearchedPlanIsSlower) {
  KeptPlan kept = keep_faster_plan({evaluated("native", 10), evaluated("single:onednn", 6),
                                    evaluated("single:xnnpack", 8), evaluated("collage", 7)});
  EXPECT_EQ(kept.reason, KeptPlan::Reason::kBaselineFaster);
  EXPECT_EQ(kept.kept, 1u);
}

TEST(KeepFasterPlanTest, ABaselineWhoseOutputsDifferNeverWins) {
  KeptPlan kept = keep_faster_plan({evaluated("native", 10),
                                    evaluated("single:onednn", 1, "output 'y': differs"),
                                    evaluated("collage", 7)});
  EXPECT_EQ(kept.best_baseline, 0u);
  EXPECT_EQ(kept.kept, 2u);
}

TEST(KeepFasterPlanTest, GreedyPlacementIsNotABaseline) {
  KeptPlan kept =
      keep_faster_plan({evaluated("native", 10), evaluated("single:onednn", 9),
                        evaluated("greedy:onednn,xnnpack", 1), evaluated("collage", 8)});
  EXPECT_EQ(kept.best_baseline, 1u);
  EXPECT_EQ(kept.kept, 3u);
}

TEST(KeepFasterPlanTest, ASearchedPlanWhoseOutputsDifferIsReplacedEvenWhenFaster) {
  KeptPlan kept = keep_faster_plan({evaluated("native", 10), evaluated("single:onednn", 9),
                                    evaluated("collage", 1, "output 'y': differs")});
  EXPECT_EQ(kept.reason, KeptPlan::Reason::kSearchedMismatch);
  EXPECT_EQ(kept.kept, 1u);
}

TEST(KeepFasterPlanTest, TheSearchedPlanIsItsFastestComputeLayout) {
  std::vector<EvaluatedPlan> plans = {evaluated("native", 10),       evaluated("single:onednn", 9),
                                      evaluated("single:onednn", 8), evaluated("collage", 8.5),
                                      evaluated("collage", 7.5),     evaluated("collage", 7)};
  plans[2].plan.compute_layouts["onednn"] = "blocked-16";
  plans[3].plan.compute_layouts["onednn"] = "blocked-16";
  plans[4].plan.compute_layouts["onednn"] = "blocked-8";
  plans[5].mismatch = "output 'y': differs";
  KeptPlan kept = keep_faster_plan(plans);
  EXPECT_EQ(kept.best_baseline, 2u);
  EXPECT_EQ(kept.searched, 4u);
  EXPECT_EQ(kept.kept, 4u);
  EXPECT_NE(describe_kept_plan(kept, plans).find("faster than single:onednn [onednn:blocked-16]"),
            std::string::npos)
      << describe_kept_plan(kept, plans);
}

// x -> Neg -> Relu -> Add(., x) -> y
Graph small_model() {
  const TensorType type{DType::kFloat32, {64}};
  Graph g;
  ValueId x = g.add_input("x", type);
  ValueId a = g.add_value("a", type);
  ValueId b = g.add_value("b", type);
  ValueId y = g.add_value("y", type);
  g.add_node("Neg", {x}, {a});
  g.add_node("Relu", {a}, {b});
  g.add_node("Add", {b, x}, {y});
  g.add_output(y);
  return g;
}

TEST(EvaluatePlansTest, APlanWithAnotherStrategysPartitionsSharesItsTiming) {
  Graph graph = small_model();
  PlanningOptions options;
  Plan whole = make_plan(graph, Strategy::parse("native"), options);
  // Not a baseline, so the keep rule below compares with native only. Its
  // one region is oneDNN's, where native's is native's.
  Plan per_op = make_plan(graph, Strategy::parse("greedy:onednn"), options);
  ASSERT_EQ(per_op.partitions.size(), 1u);
  ASSERT_EQ(per_op.partitions.front().backend, "onednn");
  Plan same = whole;
  same.strategy = "collage";
  std::vector<EvaluatedPlan> results = evaluate_plans(graph, {whole, per_op, same}, 1, 5, 1);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].same_as, "");
  EXPECT_EQ(results[1].same_as, "");
  EXPECT_EQ(results[2].same_as, "native");
  EXPECT_EQ(results[2].plan.strategy, "collage");
  EXPECT_EQ(results[2].timing.median_seconds, results[0].timing.median_seconds);
  EXPECT_GT(results[2].timing.median_seconds, 0.0);
  EXPECT_NE(describe_evaluated(results[2]).find("same plan as native"), std::string::npos);
  EXPECT_FALSE(results[2].mismatch);

  // The searched plan that is a baseline's own is kept, and said to be.
  KeptPlan kept = keep_faster_plan(results);
  EXPECT_EQ(kept.kept, 2u);
  EXPECT_NE(describe_kept_plan(kept, results).find("the searched plan is native's own"),
            std::string::npos)
      << describe_kept_plan(kept, results);
}

// Plans within kNearTie of the fastest are timed again among themselves
// and their samples pooled; a plan further off, and one whose outputs
// differ, keep their first timing.
TEST(EvaluatePlansTest, NearTiesAreTimedAgainAndTheirSamplesPooled) {
  Graph graph = small_model();
  PlanningOptions options;
  Plan native = make_plan(graph, Strategy::parse("native"), options);
  Plan onednn = make_plan(graph, Strategy::parse("greedy:onednn"), options);
  Plan blocked = onednn;
  blocked.compute_layouts["onednn"] = "blocked-16";
  Plan far = onednn;
  far.compute_layouts["onednn"] = "blocked-8";
  Plan same = native;
  same.strategy = "collage";
  std::vector<EvaluatedPlan> results =
      evaluate_plans(graph, {native, onednn, blocked, far, same}, 1, 3, 1);
  ASSERT_EQ(results.size(), 5u);
  ASSERT_EQ(results[4].same_as, "native");
  // As a tune's rounds might have read them: native fastest, oneDNN 4 %
  // behind, oneDNN blocked-16 with outputs that differ, blocked-8 far off.
  results[0].timing.median_seconds = 1e-3;
  results[1].timing.median_seconds = 1.04e-3;
  results[2].timing.median_seconds = 0.5e-3;
  results[2].mismatch = "output 'y': differs";
  results[3].timing.median_seconds = 1.2e-3;
  const int first_samples = results[0].timing.samples;
  ASSERT_EQ(first_samples, 3);

  time_near_ties_again(graph, results, 1, 4);
  EXPECT_TRUE(results[0].timed_again);
  EXPECT_TRUE(results[1].timed_again);
  EXPECT_FALSE(results[2].timed_again);
  EXPECT_FALSE(results[3].timed_again);
  EXPECT_EQ(results[0].timing.samples, first_samples + 4);
  EXPECT_EQ(results[1].timing.samples, first_samples + 4);
  EXPECT_EQ(results[3].timing.samples, first_samples);
  EXPECT_DOUBLE_EQ(results[3].timing.median_seconds, 1.2e-3);
  // The plan that is native's own shares native's pooled timing.
  EXPECT_TRUE(results[4].timed_again);
  EXPECT_EQ(results[4].timing.median_seconds, results[0].timing.median_seconds);
  EXPECT_DOUBLE_EQ(*results[0].plan.measured_ms, results[0].timing.median_seconds * 1e3);
  EXPECT_NE(describe_evaluated(results[0]).find("near the fastest: 7 runs"), std::string::npos)
      << describe_evaluated(results[0]);
}

TEST(EvaluatePlansTest, NoNearTieIsTimedAgain) {
  Graph graph = small_model();
  PlanningOptions options;
  Plan native = make_plan(graph, Strategy::parse("native"), options);
  Plan onednn = make_plan(graph, Strategy::parse("greedy:onednn"), options);
  std::vector<EvaluatedPlan> results = evaluate_plans(graph, {native, onednn}, 1, 3, 1);
  results[0].timing.median_seconds = 1e-3;
  results[1].timing.median_seconds = 2e-3;
  time_near_ties_again(graph, results, 1, 4);
  EXPECT_FALSE(results[0].timed_again);
  EXPECT_FALSE(results[1].timed_again);
  EXPECT_EQ(results[0].timing.samples, 3);
}

}  // namespace
}  // namespace collage
