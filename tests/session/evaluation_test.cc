#include "collage/session/evaluation.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace collage
