#include "collage/search/local_moves.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "search/search_fixture.h"

namespace collage {
namespace {

using testing::chain3;
using testing::FixedBoundaryCosts;
using testing::GraphBuilder;
using testing::names_of;
using testing::SearchFixture;
using testing::set_of;
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

// One partition of `spec` over every operator of chain3, as a baseline's
// region is.
ChosenPartition whole_chain(SearchFixture& f, const std::string& spec) {
  CandidatePartition region{SubGraph(f.dfg(), set_of(f.dfg(), {"a", "b", "c"})), f.spec(spec),
                            "region"};
  Cost cost = f.costs().estimate(f.dfg(), region);
  return ChosenPartition{std::move(region), std::move(cost)};
}

TEST(LocalMovesTest, CarvePiecesAreWhatPrecedesAndWhatFollowsTheCarvedOperators) {
  // p feeds q and r, which both feed s; q is carved.
  GraphBuilder b;
  ValueId p = b.op("Relu", {b.input("x")}, "p");
  ValueId q = b.op("Abs", {p}, "q");
  ValueId r = b.op("Neg", {p}, "r");
  b.output(b.op("Add", {q, r}, "s"));
  Graph graph = std::move(b.graph());
  DataflowGraph dfg(graph);
  IndexSet all = set_of(dfg, {"p", "q", "r", "s"});
  std::vector<IndexSet> pieces = carve_pieces(dfg, all, {set_of(dfg, {"q"})});
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(names_of(dfg, pieces[0]), (Lines{"p", "r"}));
  EXPECT_EQ(names_of(dfg, pieces[1]), (Lines{"s"}));
  // Carving the first operator leaves nothing before it: one piece.
  pieces = carve_pieces(dfg, all, {set_of(dfg, {"p"})});
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(names_of(dfg, pieces[0]), (Lines{"q", "r", "s"}));
}

TEST(LocalMovesTest, AnOperatorAnotherBackendRunsFasterIsCarvedOutOfARegion) {
  SearchFixture f = two_libraries();
  // "other" runs b four times as fast as "lib", alone.
  f.costs().set_op_cost("other", "Abs", 0.25);
  std::vector<ChosenPartition> cover = {whole_chain(f, "lib")};
  std::vector<LocalMove> moves = propose_local_moves(f.dfg(), cover, estimated(f), {});
  // b alone, and b with a or with c (other's 1.25 against lib's 2), each
  // saving 0.75; nothing else is faster than lib alone.
  ASSERT_EQ(moves.size(), 3u);
  for (const LocalMove& move : moves) {
    EXPECT_EQ(move.kind, LocalMove::Kind::kCarve);
    EXPECT_DOUBLE_EQ(move.predicted_seconds, -0.75);
  }
  std::vector<Lines> covers = covers_after(f, cover, moves);
  std::sort(covers.begin(), covers.end());
  EXPECT_EQ(covers,
            (std::vector<Lines>{
                {"lib:a", "other:b", "lib:c"}, {"lib:a", "other:b,c"}, {"other:a,b", "lib:c"}}));
  EXPECT_EQ(describe_move(cover, moves[0]).rfind("carve other:", 0), 0u);

  // The pieces are predicted at the region's time in the plan less lib's
  // time for what is carved: a region slow in context does not make a
  // carve look better.
  for (const LocalMove& move : propose_local_moves(f.dfg(), cover, estimated(f), {5.0})) {
    EXPECT_DOUBLE_EQ(move.predicted_seconds, -0.75);
  }
}

TEST(LocalMovesTest, ACarvesNewBoundariesArePredictedWithTheirConversions) {
  SearchFixture f = two_libraries();
  f.costs().set_op_cost("other", "Abs", 0.25);
  std::vector<ChosenPartition> cover = {whole_chain(f, "lib")};
  // 0.25 per value handed between two backends: b alone crosses two
  // boundaries (0.75 - 0.5 saved), b with a or with c one (0.75 - 0.25).
  FixedBoundaryCosts boundaries(0.25);
  std::vector<LocalMove> moves = propose_local_moves(f.dfg(), cover, estimated(f), {}, &boundaries);
  ASSERT_EQ(moves.size(), 3u);
  EXPECT_DOUBLE_EQ(moves[0].predicted_seconds, -0.5);
  EXPECT_DOUBLE_EQ(moves[1].predicted_seconds, -0.5);
  EXPECT_DOUBLE_EQ(moves[2].predicted_seconds, -0.25);
  EXPECT_EQ(covers_after(f, cover, {moves[2]}),
            (std::vector<Lines>{{"lib:a", "other:b", "lib:c"}}));
  // At 0.5 a value, b alone saves nothing and is not proposed.
  FixedBoundaryCosts dear(0.5);
  EXPECT_EQ(propose_local_moves(f.dfg(), cover, estimated(f), {}, &dear).size(), 2u);
}

TEST(LocalMovesTest, NothingIsCarvedWhereTheRegionsBackendIsAsFast) {
  SearchFixture f = two_libraries();
  std::vector<ChosenPartition> cover = {whole_chain(f, "lib")};
  EXPECT_TRUE(propose_local_moves(f.dfg(), cover, estimated(f), {}).empty());
}

TEST(LocalMovesTest, PiecesLeftOfSeveralCarvesGoByTheCarvedOperatorsTheyFollow) {
  // a -> b -> c -> d -> e, and a -> f -> e beside them; b and d are carved.
  GraphBuilder g;
  ValueId a = g.op("Relu", {g.input("x")}, "a");
  ValueId b = g.op("Abs", {a}, "b");
  ValueId c = g.op("Neg", {b}, "c");
  ValueId d = g.op("Abs", {c}, "d");
  ValueId f = g.op("Neg", {a}, "f");
  g.output(g.op("Add", {d, f}, "e"));
  Graph graph = std::move(g.graph());
  DataflowGraph dfg(graph);
  IndexSet all = set_of(dfg, {"a", "b", "c", "d", "e", "f"});
  std::vector<IndexSet> pieces =
      carve_pieces(dfg, all, std::vector<IndexSet>{set_of(dfg, {"b"}), set_of(dfg, {"d"})});
  std::vector<Lines> named;
  for (const IndexSet& piece : pieces) {
    named.push_back(names_of(dfg, piece));
    std::sort(named.back().begin(), named.back().end());
  }
  // f follows neither carved operator, so it stays with a; e follows both.
  std::sort(named.begin(), named.end());
  EXPECT_EQ(named, (std::vector<Lines>{{"a", "f"}, {"c"}, {"e"}}));
  // One carved set leaves what precedes it and what follows it.
  pieces = carve_pieces(dfg, all, std::vector<IndexSet>{set_of(dfg, {"a"})});
  ASSERT_EQ(pieces.size(), 1u);
  Lines rest = names_of(dfg, pieces[0]);
  std::sort(rest.begin(), rest.end());
  EXPECT_EQ(rest, (Lines{"b", "c", "d", "e", "f"}));
}

// x -> a Relu -> b Abs -> c Neg -> d Abs -> e Relu (output).
SearchFixture two_abs() {
  GraphBuilder g;
  ValueId a = g.op("Relu", {g.input("x")}, "a");
  ValueId b = g.op("Abs", {a}, "b");
  ValueId c = g.op("Neg", {b}, "c");
  ValueId d = g.op("Abs", {c}, "d");
  g.output(g.op("Relu", {d}, "e"));
  SearchFixture f(std::move(g.graph()));
  f.native_singles();
  f.add_spec("lib", make_graph_rule(testing::ops_of_type({"Relu", "Abs", "Neg"}), {.max_depth = 1}),
             {.max_depth = 1}, SubGraphConfig{});
  f.costs().set_default_op_cost("native", 10.0).set_default_op_cost("lib", 1.0);
  return f;
}

ChosenPartition lib_region(SearchFixture& f, const Lines& names) {
  CandidatePartition region{SubGraph(f.dfg(), set_of(f.dfg(), names)), f.spec("lib"), "region"};
  Cost cost = f.costs().estimate(f.dfg(), region);
  return ChosenPartition{std::move(region), std::move(cost)};
}

TEST(LocalMovesTest, EveryOperatorOfAKindAnotherBackendRunsFasterIsCarvedInOneMove) {
  SearchFixture f = two_abs();
  f.costs().set_op_cost("native", "Abs", 0.5);
  std::vector<ChosenPartition> cover = {lib_region(f, {"a", "b", "c", "d", "e"})};
  std::vector<LocalMove> moves = propose_local_moves(f.dfg(), cover, estimated(f), {});
  // b alone, d alone (0.5 each), and both at once (1.0), first.
  ASSERT_EQ(moves.size(), 3u);
  EXPECT_EQ(moves[0].carved, 2u);
  EXPECT_DOUBLE_EQ(moves[0].predicted_seconds, -1.0);
  EXPECT_EQ(covers_after(f, cover, {moves[0]}),
            (std::vector<Lines>{{"lib:a", "native:b", "lib:c", "native:d", "lib:e"}}));
  EXPECT_EQ(describe_move(cover, moves[0]).rfind("carve 2 like native:", 0), 0u);
  for (std::size_t i : {1u, 2u}) {
    EXPECT_EQ(moves[i].carved, 1u);
    EXPECT_DOUBLE_EQ(moves[i].predicted_seconds, -0.5);
  }
}

TEST(LocalMovesTest, AnOperatorSlowerInItsRegionThanAloneIsCarvedByItsTimeThere) {
  SearchFixture f = two_abs();
  // native runs Abs as fast as lib does alone: nothing to carve.
  f.costs().set_op_cost("native", "Abs", 1.0);
  std::vector<ChosenPartition> cover = {lib_region(f, {"a", "b", "c", "d", "e"})};
  EXPECT_TRUE(propose_local_moves(f.dfg(), cover, estimated(f), {}).empty());
  // In the region, its steps for b and d took 3 and 1.5: carving them
  // saves 2 and 0.5, 2.5 together.
  const PostDfsIndex b = *set_of(f.dfg(), {"b"}).first_inside();
  const PostDfsIndex d = *set_of(f.dfg(), {"d"}).first_inside();
  std::vector<LocalMove> moves =
      propose_local_moves(f.dfg(), cover, estimated(f), {}, nullptr, {{b, 3.0}, {d, 1.5}});
  ASSERT_EQ(moves.size(), 3u);
  EXPECT_EQ(moves[0].carved, 2u);
  EXPECT_DOUBLE_EQ(moves[0].predicted_seconds, -2.5);
  EXPECT_DOUBLE_EQ(moves[1].predicted_seconds, -2.0);
  EXPECT_DOUBLE_EQ(moves[2].predicted_seconds, -0.5);
  // d as fast in the region as alone: b alone is carved, and no group.
  moves = propose_local_moves(f.dfg(), cover, estimated(f), {}, nullptr, {{b, 3.0}, {d, 1.0}});
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].carved, 1u);
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
