#include "collage/session/move_refinement.h"

#include <gtest/gtest.h>

namespace collage {
namespace {

constexpr double kMargin = 0.015;

// A start of one partition (the one node of a one-node graph) costing `ms`
// milliseconds.
MoveStart start_costing(const std::string& name, double ms) {
  static const Graph graph = [] {
    Graph g;
    const TensorType type{DType::kFloat32, {4}};
    const ValueId x = g.add_input("x", type);
    const ValueId y = g.add_value("y", type);
    g.add_node("Relu", {x}, {y});
    g.add_output(y);
    return g;
  }();
  static const DataflowGraph dfg(graph);
  const SubGraph all(dfg, IndexSet(dfg.size(), {0}));
  return MoveStart{name, {ChosenPartition{{all, nullptr, "op"}, Cost::value(ms * 1e-3)}}, true};
}

TEST(DropImplausibleStartsTest, DropsStartsEstimatedOverTheRatioTimesTheFirst) {
  std::vector<MoveStart> starts = {start_costing("searched", 10), start_costing("a", 19),
                                   start_costing("b", 21), start_costing("c", 20)};
  const auto dropped = drop_implausible_starts(starts, 2.0);
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_EQ(starts[0].name, "searched");
  EXPECT_EQ(starts[1].name, "a");
  EXPECT_EQ(starts[2].name, "c");
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].first, "b");
  EXPECT_NEAR(dropped[0].second, 21.0, 1e-9);
}

TEST(DropImplausibleStartsTest, KeepsTheFirstStartAlways) {
  std::vector<MoveStart> starts = {start_costing("searched", 50)};
  EXPECT_TRUE(drop_implausible_starts(starts, 2.0).empty());
  EXPECT_EQ(starts.size(), 1u);
}

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

TEST(CarvesToTryFirstTest, KeepsTheCarvesThatWouldBeatTheGapLargestGainFirst) {
  auto move = [](LocalMove::Kind kind, double predicted) {
    LocalMove m;
    m.kind = kind;
    m.predicted_seconds = predicted;
    return m;
  };
  const std::vector<LocalMove> moves = {
      move(LocalMove::Kind::kCarve, -0.002), move(LocalMove::Kind::kMerge, -0.009),
      move(LocalMove::Kind::kCarve, -0.008), move(LocalMove::Kind::kCarve, -0.0005),
      move(LocalMove::Kind::kCarve, -0.004), move(LocalMove::Kind::kReassign, -0.007)};
  // The one-backend start ran 1 ms slower: only carves predicted to gain
  // more than that, and at most two of them.
  const std::vector<LocalMove> kept = carves_to_try_first(moves, 0.001);
  ASSERT_EQ(kept.size(), kRegionCarves);
  EXPECT_EQ(kept[0].predicted_seconds, -0.008);
  EXPECT_EQ(kept[1].predicted_seconds, -0.004);
  EXPECT_TRUE(carves_to_try_first(moves, 0.01).empty());
}

}  // namespace
}  // namespace collage
