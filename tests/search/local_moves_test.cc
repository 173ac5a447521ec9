#include "collage/search/local_moves.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "search/search_fixture.h"

namespace collage {
namespace {

using testing::chain3;
using testing::GraphBuilder;
using testing::SearchFixture;
using Lines = std::vector<std::string>;

// Native runs each op alone at 10; "lib" and "other" have candidates of up
// to two ops at 1 per op, and may be merged into regions of any depth.
// "partial" has candidates for every op but can run only Relu and Abs.
SearchFixture two_libraries() {
  SearchFixture f(chain3());
  f.native_singles();
  for (const char* name : {"lib", "other", "partial"}) {
    f.add_spec(name,
               make_graph_rule(testing::ops_of_type({"Relu", "Abs", "Neg"}), {.max_depth = 2}),
               {.max_depth = 2}, SubGraphConfig{});
  }
  f.costs()
      .set_default_op_cost("native", 10.0)
      .set_default_op_cost("lib", 1.0)
      .set_default_op_cost("other", 1.0)
      .set_op_cost("partial", "Relu", 1.0)
      .set_op_cost("partial", "Abs", 1.0);
  return f;
}

std::vector<EstimatedCandidate> estimated(SearchFixture& f) {
  std::vector<EstimatedCandidate> all;
  for (const CandidatePartition& c : f.candidates()) {
    all.push_back(EstimatedCandidate{c, f.costs().estimate(f.dfg(), c)});
  }
  return all;
}

CandidatePartition candidate(SearchFixture& f, const std::string& spec, const Lines& names) {
  for (const CandidatePartition& c : f.candidates()) {
    if (c.spec_name() == spec && testing::names_of(f.dfg(), c.sub_graph.inside()) == names) {
      return c;
    }
  }
  throw std::runtime_error("no candidate");
}

ChosenPartition chosen(SearchFixture& f, const std::string& spec, const Lines& names) {
  CandidatePartition c = candidate(f, spec, names);
  Cost cost = f.costs().estimate(f.dfg(), c);
  return ChosenPartition{std::move(c), std::move(cost)};
}

// lib:a,b then other:c.
std::vector<ChosenPartition> lib_then_other(SearchFixture& f) {
  return {chosen(f, "lib", {"a", "b"}), chosen(f, "other", {"c"})};
}

// Each move as the cover it leads to.
std::vector<Lines> covers_after(SearchFixture& f, const std::vector<ChosenPartition>& cover,
                                const std::vector<LocalMove>& moves) {
  std::vector<Lines> covers;
  for (const LocalMove& move : moves) {
    std::string why;
    auto moved = apply_local_move(f.dfg(), cover, move, f.costs(), why);
    covers.push_back(moved ? f.describe(moved->partitions) : Lines{"failed: " + why});
  }
  return covers;
}

TEST(LocalMovesTest, FromEstimatesAloneEveryMovePredictedNoSlowerIsProposed) {
  SearchFixture f = two_libraries();
  std::vector<ChosenPartition> cover = lib_then_other(f);
  std::vector<LocalMove> moves = propose_local_moves(f.dfg(), cover, estimated(f), {});
  // Reassigning c to native (+9) is not proposed, nor to partial, which has
  // no valid candidate for it (nor, so, a merge on partial); merges are
  // predicted at the sum of their parts.
  EXPECT_EQ(covers_after(f, cover, moves), (std::vector<Lines>{
                                               {"other:a,b", "other:c"},
                                               {"partial:a,b", "other:c"},
                                               {"lib:a,b", "lib:c"},
                                               {"lib:a,b,c"},
                                               {"other:a,b,c"},
                                               {"lib:a", "other:b,c"},
                                           }));
  for (const LocalMove& move : moves) EXPECT_EQ(move.predicted_seconds, 0);
  EXPECT_EQ(moves[5].kind, LocalMove::Kind::kShift);
  EXPECT_EQ(describe_move(cover, moves[3]).rfind("merge lib:", 0), 0u);
}

TEST(LocalMovesTest, APartitionSlowInContextIsMovedFirst) {
  SearchFixture f = two_libraries();
  std::vector<ChosenPartition> cover = lib_then_other(f);
  // other:c ran at 5 in the plan, four more than estimated.
  std::vector<LocalMove> moves = propose_local_moves(f.dfg(), cover, estimated(f), {2.0, 5.0});
  ASSERT_FALSE(moves.empty());
  EXPECT_EQ(covers_after(f, cover, {moves.front()}), (std::vector<Lines>{{"lib:a,b", "lib:c"}}));
  EXPECT_EQ(moves.front().predicted_seconds, -4.0);
  // Native at 10 is now only 5 more than c's time in context: still not proposed.
  for (const LocalMove& move : moves) {
    for (const CandidatePartition& added : move.added) EXPECT_NE(added.spec_name(), "native");
  }
  EXPECT_TRUE(std::is_sorted(moves.begin(), moves.end(), [](const auto& a, const auto& b) {
    return a.predicted_seconds < b.predicted_seconds;
  }));
}

TEST(LocalMovesTest, AMovedCoverIsReEstimatedAndRemembersWhereEachPartitionWas) {
  SearchFixture f = two_libraries();
  std::vector<ChosenPartition> cover = lib_then_other(f);
  LocalMove reassign{LocalMove::Kind::kReassign, {1}, {candidate(f, "lib", {"c"})}, 0};
  std::string why;
  auto moved = apply_local_move(f.dfg(), cover, reassign, f.costs(), why);
  ASSERT_TRUE(moved);
  EXPECT_EQ(f.describe(moved->partitions), (Lines{"lib:a,b", "lib:c"}));
  EXPECT_EQ(moved->previous, (std::vector<std::optional<std::size_t>>{0, std::nullopt}));
  EXPECT_EQ(moved->partitions[1].cost.seconds(), 1.0);
}

TEST(LocalMovesTest, AMoveToAPartitionThatCannotRunFailsWithTheReason) {
  SearchFixture f = two_libraries();
  std::vector<ChosenPartition> cover = lib_then_other(f);
  LocalMove reassign{LocalMove::Kind::kReassign, {1}, {candidate(f, "partial", {"c"})}, 0};
  std::string why;
  EXPECT_FALSE(apply_local_move(f.dfg(), cover, reassign, f.costs(), why));
  EXPECT_NE(why.find("partial"), std::string::npos);
  EXPECT_NE(why.find("invalid"), std::string::npos);
}

TEST(LocalMovesTest, ACoverSurvivesItsTextAndBadTextIsRefused) {
  SearchFixture f = two_libraries();
  std::vector<ChosenPartition> cover = lib_then_other(f);
  std::string text = cover_to_text(cover);
  auto back = cover_from_text(f.dfg(), f.specs(), text, f.costs());
  ASSERT_TRUE(back);
  EXPECT_EQ(f.describe(*back), f.describe(cover));
  EXPECT_EQ((*back)[0].candidate.rule_name, cover[0].candidate.rule_name);
  EXPECT_EQ((*back)[0].cost.seconds(), 2.0);

  // Not covering c; a backend not offered; a partition that cannot run; noise.
  std::string first_line = text.substr(0, text.find('\n') + 1);
  EXPECT_FALSE(cover_from_text(f.dfg(), f.specs(), first_line, f.costs()));
  std::string unknown = text;
  unknown.replace(0, 3, "xyz");
  EXPECT_FALSE(cover_from_text(f.dfg(), f.specs(), unknown, f.costs()));
  std::string cannot_run = text;
  cannot_run.replace(text.find("other"), 5, "partial");
  EXPECT_FALSE(cover_from_text(f.dfg(), f.specs(), cannot_run, f.costs()));
  EXPECT_FALSE(cover_from_text(f.dfg(), f.specs(), "lib 1,x op\n", f.costs()));
  EXPECT_FALSE(cover_from_text(f.dfg(), f.specs(), "lib 99 op\n", f.costs()));
  EXPECT_FALSE(cover_from_text(f.dfg(), f.specs(), "", f.costs()));
}

}  // namespace
}  // namespace collage
