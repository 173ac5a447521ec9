#include "collage/session/move_refinement.h"

#include <gtest/gtest.h>

namespace collage {
namespace {

constexpr double kMargin = 0.015;

TEST(ChooseStartTest, AnotherStartReplacesTheFirstOnlyWhenFasterByTheMargin) {
  // The searched cover first, then greedy (both mixed).
  EXPECT_EQ(choose_start({1.0, 0.99}, {false, false}, kMargin), 0u);
  EXPECT_EQ(choose_start({1.0, 0.97}, {false, false}, kMargin), 1u);
  // The fastest of those that beat the margin.
  EXPECT_EQ(choose_start({1.0, 0.97, 0.95}, {false, false, false}, kMargin), 2u);
}

TEST(ChooseStartTest, AOneBackendCoverWinsATieWithAMixedOne) {
  // single:onednn 1% slower than the searched cover: within the margin, the
  // simpler cover is kept.
  EXPECT_EQ(choose_start({1.0, 1.01}, {false, true}, kMargin), 1u);
  // 1% faster, below the margin a replacement needs: kept as well.
  EXPECT_EQ(choose_start({1.0, 0.99}, {false, true}, kMargin), 1u);
  // 3% slower: the mixed cover is shown to be faster and stays.
  EXPECT_EQ(choose_start({1.0, 1.03}, {false, true}, kMargin), 0u);
}

TEST(ChooseStartTest, TheFastestOneBackendCoverWinsTheTie) {
  EXPECT_EQ(choose_start({1.0, 1.012, 1.004, 0.99}, {false, true, true, false}, kMargin), 2u);
  // Greedy faster by the margin, a single backend within the margin of it.
  EXPECT_EQ(choose_start({1.0, 0.965, 0.96}, {false, true, false}, kMargin), 1u);
  // No one-backend start: the first rule alone.
  EXPECT_EQ(choose_start({1.0}, {false}, kMargin), 0u);
}

TEST(ChooseStartTest, AOneBackendFirstStartIsReplacedOnlyByTheMargin) {
  EXPECT_EQ(choose_start({1.0, 0.99}, {true, false}, kMargin), 0u);
  EXPECT_EQ(choose_start({1.0, 0.97}, {true, false}, kMargin), 1u);
}

}  // namespace
}  // namespace collage
