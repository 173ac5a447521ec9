#include "collage/search/shortest_path.h"

#include <gtest/gtest.h>

#include "collage/cost/boundary_costs.h"
#include "collage/ir/error.h"
#include "cost/layout_backend.h"
#include "search/search_fixture.h"

namespace collage {
namespace {

using testing::chain3;
using testing::FixedBoundaryCosts;
using testing::FixedRule;
using testing::GraphBuilder;
using testing::SearchFixture;
using testing::set_of;
using Lines = std::vector<std::string>;

// x -> r Relu (output)
Graph single_relu() {
  GraphBuilder b;
  b.output(b.op("Relu", {b.input("x")}, "r"));
  return std::move(b.graph());
}

// x -> r1 Relu -> a Abs -> r2 Relu; add(a, r2) (output)
Graph diamond() {
  GraphBuilder b;
  ValueId r1 = b.op("Relu", {b.input("x")}, "r1");
  ValueId a = b.op("Abs", {r1}, "a");
  ValueId r2 = b.op("Relu", {a}, "r2");
  b.output(b.op("Add", {a, r2}, "add"));
  return std::move(b.graph());
}

TEST(ShortestPathTest, ASingleOpGoesToTheCheaperBackend) {
  SearchFixture f(single_relu());
  f.native_singles().graph_backend("byoc", {"Relu"});
  f.costs().set_op_cost("native", "Relu", 2.0).set_op_cost("byoc", "Relu", 1.0);
  SearchResult result = f.search();
  EXPECT_EQ(f.describe(result), Lines{"byoc:r"});
  EXPECT_DOUBLE_EQ(result.total.seconds(), 1.0);
}

TEST(ShortestPathTest, ASingleOpStaysNativeWhenNativeIsCheaper) {
  SearchFixture f(single_relu());
  f.native_singles().graph_backend("byoc", {"Relu"});
  f.costs().set_op_cost("native", "Relu", 1.0).set_op_cost("byoc", "Relu", 2.0);
  EXPECT_EQ(f.describe(f.search()), Lines{"native:r"});
}

// The diamond's byoc backend runs Relu and Add; every partition costs 5 more.
SearchFixture diamond_fixture(std::size_t max_depth) {
  SearchFixture f(diamond());
  f.native_singles().graph_backend("byoc", {"Relu", "Add"}, {.max_depth = max_depth});
  f.costs().set_default_op_cost("native", 10.0).set_default_op_cost("byoc", 1.0);
  f.costs().set_partition_overhead(5.0);
  return f;
}

TEST(ShortestPathTest, DiamondAtMaxDepthOneTakesSingleOps) {
  SearchFixture f = diamond_fixture(1);
  SearchResult result = f.search();
  EXPECT_EQ(f.describe(result), (Lines{"byoc:r1", "native:a", "byoc:r2", "byoc:add"}));
  EXPECT_DOUBLE_EQ(result.total.seconds(), 33.0);
}

TEST(ShortestPathTest, DiamondAtMaxDepthThreeJoinsTheReluAndTheAdd) {
  SearchFixture f = diamond_fixture(3);
  SearchResult result = f.search();
  EXPECT_EQ(f.describe(result), (Lines{"byoc:r1", "native:a", "byoc:r2,add"}));
  EXPECT_DOUBLE_EQ(result.total.seconds(), 28.0);
}

// Native fuses by kind; byoc takes regions up to `max_depth`. The side given
// the cheap op costs (Relu 1, Abs 2, Neg 4) should win, with a fusion discount of 0.5.
SearchFixture chain_fixture(std::size_t max_depth, bool byoc_cheaper) {
  SearchFixture f(chain3());
  f.native_fusing().graph_backend("byoc", {"Relu", "Abs", "Neg"}, {.max_depth = max_depth});
  std::string cheap = byoc_cheaper ? "byoc" : "native";
  std::string dear = byoc_cheaper ? "native" : "byoc";
  f.costs().set_op_cost(cheap, "Relu", 1.0).set_op_cost(cheap, "Abs", 2.0);
  f.costs().set_op_cost(cheap, "Neg", 4.0).set_default_op_cost(dear, 10.0);
  f.costs().set_fusion_discount(0.5);
  return f;
}

TEST(ShortestPathTest, ChainAtMaxDepthOneTakesEachOpAlone) {
  SearchFixture f = chain_fixture(1, true);
  EXPECT_EQ(f.describe(f.search()), (Lines{"byoc:a", "byoc:b", "byoc:c"}));
}

TEST(ShortestPathTest, ChainAtMaxDepthTwoFusesTheDearerPair) {
  SearchFixture f = chain_fixture(2, true);
  SearchResult result = f.search();
  EXPECT_EQ(f.describe(result), (Lines{"byoc:a", "byoc:b,c"}));
  EXPECT_DOUBLE_EQ(result.total.seconds(), 4.0);
}

TEST(ShortestPathTest, ChainAtMaxDepthThreeFusesEverything) {
  SearchFixture f = chain_fixture(3, true);
  SearchResult result = f.search();
  EXPECT_EQ(f.describe(result), Lines{"byoc:a,b,c"});
  EXPECT_DOUBLE_EQ(result.total.seconds(), 3.5);
}

TEST(ShortestPathTest, ChainStaysNativeAtEveryDepthWhenNativeIsCheaper) {
  for (std::size_t depth : {1, 2, 3}) {
    SearchFixture f = chain_fixture(depth, false);
    EXPECT_EQ(f.describe(f.search()), Lines{"native:a,b,c"}) << "max depth " << depth;
  }
}

// x -> a Relu; b Abs(a); c Neg(a); a, b and c are all graph outputs.
Graph three_outputs() {
  GraphBuilder b;
  ValueId a = b.op("Relu", {b.input("x")}, "a");
  b.output(a);
  b.output(b.op("Abs", {a}, "b"));
  b.output(b.op("Neg", {a}, "c"));
  return std::move(b.graph());
}

TEST(ShortestPathTest, MultipleOutputsStaySeparateUnderOneExitAndNoTaps) {
  SearchFixture f(three_outputs());
  f.native_singles().graph_backend("byoc", {"Relu", "Abs", "Neg"}, {.max_exits = 1});
  f.costs().set_default_op_cost("native", 10.0).set_default_op_cost("byoc", 1.0);
  f.costs().set_partition_overhead(1.0);
  EXPECT_EQ(f.describe(f.search()), (Lines{"byoc:a", "byoc:b", "byoc:c"}));
}

TEST(ShortestPathTest, MultipleOutputsAndATapJoinWhenTheConfigAllows) {
  SearchFixture f(three_outputs());
  f.native_singles().graph_backend("byoc", {"Relu", "Abs", "Neg"},
                                   {.max_exits = 3, .allow_taps = true});
  f.costs().set_default_op_cost("native", 10.0).set_default_op_cost("byoc", 1.0);
  f.costs().set_partition_overhead(1.0);
  SearchResult result = f.search();
  EXPECT_EQ(f.describe(result), Lines{"byoc:a,b,c"});
  EXPECT_DOUBLE_EQ(result.total.seconds(), 4.0);
}

TEST(ShortestPathTest, FanInThroughConcatFusesBothProducers) {
  // x -> r0 Relu, r1 Abs -> cat Concat (output)
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId r0 = b.op("Relu", {x}, "r0");
  ValueId r1 = b.op("Abs", {x}, "r1");
  b.output(b.op("Concat", {r0, r1}, "cat"));
  SearchFixture f(std::move(b.graph()));
  f.native_fusing().graph_backend("byoc", {"Relu", "Abs"});
  f.costs().set_default_op_cost("native", 2.0).set_default_op_cost("byoc", 1.0);
  f.costs().set_fusion_discount(0.5).set_partition_overhead(2.0);
  SearchResult result = f.search();
  EXPECT_EQ(f.describe(result), Lines{"native:r0,r1,cat"});
  EXPECT_DOUBLE_EQ(result.total.seconds(), 5.0);
}

TEST(ShortestPathTest, OneFivePartitionBeatsFiveSingleOpsThatAreEachCheaper) {
  GraphBuilder b;
  ValueId v = b.op("Conv", {b.input("x"), b.constant("w")}, "conv");
  v = b.op("Add", {v, b.constant("bias")}, "add");
  v = b.op("Relu", {v}, "relu");
  v = b.op("Mul", {v, v}, "mul");
  b.output(b.op("Sigmoid", {v}, "sigmoid"));
  SearchFixture f(std::move(b.graph()));
  f.native_singles().graph_backend("byoc", {"Conv", "Add", "Relu", "Mul", "Sigmoid"});
  // Alone, each op is cheaper natively (1 < 1.5); together, byoc's fusion pays.
  f.costs().set_default_op_cost("native", 1.0).set_default_op_cost("byoc", 1.5);
  f.costs().set_fusion_discount(0.5).set_partition_overhead(0.5);
  SearchResult result = f.search();
  EXPECT_EQ(f.describe(result), Lines{"byoc:conv,add,relu,mul,sigmoid"});
  EXPECT_DOUBLE_EQ(result.total.seconds(), 4.25);
}

TEST(ShortestPathTest, DoubleResidualGoesToOneByocPartition) {
  // x -> a Relu; b Abs(a); c Add(b, a); d Add(c, a) (output)
  GraphBuilder b;
  ValueId a = b.op("Relu", {b.input("x")}, "a");
  ValueId bb = b.op("Abs", {a}, "b");
  ValueId c = b.op("Add", {bb, a}, "c");
  b.output(b.op("Add", {c, a}, "d"));
  SearchFixture f(std::move(b.graph()));
  f.native_singles().graph_backend("byoc", {"Abs", "Add"});
  f.costs().set_default_op_cost("native", 10.0).set_default_op_cost("byoc", 1.0);
  f.costs().set_partition_overhead(1.0);
  SearchResult result = f.search();
  EXPECT_EQ(f.describe(result), (Lines{"native:a", "byoc:b,c,d"}));
  EXPECT_DOUBLE_EQ(result.total.seconds(), 15.0);
}

TEST(ShortestPathTest, PruningEstimatesOnlyMaximalCandidatesAndSingleOps) {
  auto run = [](bool prune) {
    SearchFixture f(chain3());
    f.native_singles().graph_backend("byoc", {"Relu", "Abs", "Neg"});
    f.costs().set_default_op_cost("native", 10.0).set_default_op_cost("byoc", 1.0);
    SearchResult result = f.search(prune);
    EXPECT_DOUBLE_EQ(result.total.seconds(), 3.0);
    EXPECT_EQ(result.stats.candidates_estimated, f.costs().estimate_count());
    return f.costs().estimate_count();
  };
  // 3 native singles + byoc {a}, {b}, {c}, {a,b}, {b,c}, {a,b,c}; pruning
  // drops {a,b} and {b,c}, which lie inside {a,b,c}.
  EXPECT_EQ(run(false), 9u);
  EXPECT_EQ(run(true), 7u);
}

TEST(ShortestPathTest, TwoConvexPartitionsThatFeedEachOtherAreNeverChosenTogether) {
  // x -> a1 Relu -> b1 Neg (output); x -> b2 Abs -> a2 Exp (output).
  // {a1, a2} and {b1, b2} are each convex, but a1 feeds b1 and b2 feeds a2.
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId a1 = b.op("Relu", {x}, "a1");
  b.output(b.op("Neg", {a1}, "b1"));
  ValueId b2 = b.op("Abs", {x}, "b2");
  b.output(b.op("Exp", {b2}, "a2"));
  SearchFixture f(std::move(b.graph()));
  const DataflowGraph& dfg = f.dfg();
  auto fixed = std::make_shared<FixedRule>(
      std::vector<IndexSet>{set_of(dfg, {"a1", "a2"}), set_of(dfg, {"b1", "b2"})});
  f.native_singles().add_spec("fast", fixed, {});
  f.costs().set_default_op_cost("native", 10.0);
  f.costs().set_op_cost("fast", "Relu", 0.5).set_op_cost("fast", "Exp", 0.5);
  f.costs().set_op_cost("fast", "Neg", 1.0).set_op_cost("fast", "Abs", 1.0);
  SearchResult result = f.search();
  // Both fast partitions would cost 3; the best acyclic choice costs 21.
  EXPECT_DOUBLE_EQ(result.total.seconds(), 21.0);
  EXPECT_EQ(f.describe(result), (Lines{"native:b2", "fast:a1,a2", "native:b1"}));
  EXPECT_GE(result.stats.cycles_rejected, 1u);
}

TEST(ShortestPathTest, ANodeNoOtherBackendRunsIsCoveredByNative) {
  GraphBuilder b;
  ValueId r = b.op("Relu", {b.input("x")}, "r");
  b.output(b.op("Softmax", {r}, "s"));
  SearchFixture f(std::move(b.graph()));
  f.native_singles().graph_backend("byoc", {"Relu"});
  f.costs().set_default_op_cost("native", 10.0).set_default_op_cost("byoc", 1.0);
  EXPECT_EQ(f.describe(f.search()), (Lines{"byoc:r", "native:s"}));
}

TEST(ShortestPathTest, ANodeWithoutAnyCandidateIsAnErrorNamingIt) {
  GraphBuilder b;
  ValueId r = b.op("Relu", {b.input("x")}, "r");
  b.output(b.op("Softmax", {r}, "s"));
  SearchFixture f(std::move(b.graph()));
  f.graph_backend("byoc", {"Relu"});
  f.costs().set_default_op_cost("byoc", 1.0);
  try {
    f.search();
    FAIL() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.where().node, "s");
    EXPECT_NE(error.message().find("Softmax"), std::string::npos) << error.message();
  }
}

TEST(ShortestPathTest, CandidatesWithInvalidCostsAreSkipped) {
  GraphBuilder b;
  ValueId r = b.op("Relu", {b.input("x")}, "r");
  b.output(b.op("Abs", {r}, "s"));
  SearchFixture f(std::move(b.graph()));
  f.native_singles().graph_backend("byoc", {"Relu", "Abs"});
  // byoc has no cost for Abs: {s} and {r, s} are invalid for it.
  f.costs().set_default_op_cost("native", 10.0).set_op_cost("byoc", "Relu", 1.0);
  SearchResult result = f.search();
  EXPECT_EQ(f.describe(result), (Lines{"byoc:r", "native:s"}));
  EXPECT_GE(result.stats.invalid_skipped, 1u);
}

TEST(ShortestPathTest, ANodeWhoseCandidatesAreAllInvalidIsAnError) {
  SearchFixture f(chain3());
  f.native_singles();
  f.costs().set_op_cost("native", "Relu", 1.0).set_op_cost("native", "Neg", 1.0);
  EXPECT_THROW(f.search(), Error);
}

TEST(ShortestPathTest, InputsAndConstantsCostNothing) {
  GraphBuilder b;
  b.output(b.op("Mul", {b.input("x"), b.constant("w")}, "m"));
  SearchFixture f(std::move(b.graph()));
  f.native_singles();
  f.costs().set_default_op_cost("native", 1.0);
  SearchResult result = f.search();
  EXPECT_EQ(f.describe(result), Lines{"native:m"});
  EXPECT_DOUBLE_EQ(result.total.seconds(), 1.0);
}

TEST(ShortestPathTest, EqualCostsResolveTheSameWayEveryTime) {
  auto run = [] {
    SearchFixture f(chain3());
    f.graph_backend("p", {"Relu", "Abs", "Neg"}).graph_backend("q", {"Relu", "Abs", "Neg"});
    f.costs().set_default_op_cost("p", 1.0).set_default_op_cost("q", 1.0);
    return f.describe(f.search());
  };
  Lines first = run();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(run(), first);
}

TEST(ShortestPathTest, ReportsSearchStatistics) {
  SearchFixture f(chain3());
  f.native_singles();
  f.costs().set_default_op_cost("native", 1.0);
  SearchResult result = f.search();
  EXPECT_EQ(result.stats.candidates, 3u);
  EXPECT_EQ(result.stats.candidates_estimated, 3u);
  // {}, {x}, {x,a}, {x,a,b}, {x,a,b,c}
  EXPECT_EQ(result.stats.states_reached, 5u);
  EXPECT_EQ(result.stats.states_expanded, 5u);
}

// chain3 with byoc running the Relu and the Neg for 1 each, native 2 each.
SearchFixture chain_with_byoc_ends() {
  SearchFixture f(chain3());
  f.native_singles().graph_backend("byoc", {"Relu", "Neg"}, {.max_depth = 1});
  f.costs().set_default_op_cost("native", 2.0).set_default_op_cost("byoc", 1.0);
  return f;
}

TEST(ShortestPathTest, WithoutBoundaryCostsEachOpGoesToItsCheapestBackend) {
  SearchFixture f = chain_with_byoc_ends();
  SearchResult result = f.search();
  EXPECT_EQ(f.describe(result), (Lines{"byoc:a", "native:b", "byoc:c"}));
  EXPECT_DOUBLE_EQ(result.total.seconds(), 4.0);
}

TEST(ShortestPathTest, BoundaryCostsKeepAChainOnOneBackendWhenSwitchingCostsMore) {
  // byoc, native, byoc: 4 + two boundaries at 5 = 14; all native: 6.
  SearchFixture f = chain_with_byoc_ends();
  FixedBoundaryCosts boundaries(5.0);
  SearchResult result = f.search(false, &boundaries);
  EXPECT_EQ(f.describe(result), (Lines{"native:a", "native:b", "native:c"}));
  EXPECT_GT(boundaries.calls, 0);
}

TEST(ShortestPathTest, CheapBoundariesStillLetTheChainSwitchBackends) {
  // byoc, native, byoc: 4 + 2 x 0.5 = 5 < 6.
  SearchFixture f = chain_with_byoc_ends();
  FixedBoundaryCosts boundaries(0.5);
  SearchResult result = f.search(false, &boundaries);
  EXPECT_EQ(f.describe(result), (Lines{"byoc:a", "native:b", "byoc:c"}));
  // The partitions' costs leave the boundaries out until they are charged.
  EXPECT_DOUBLE_EQ(total_cost(result.partitions).seconds(), 4.0);
  charge_boundaries(f.dfg(), result.partitions, boundaries);
  // Each boundary goes to its producer: byoc:a and native:b.
  EXPECT_DOUBLE_EQ(result.partitions[0].cost.seconds(), 1.5);
  EXPECT_DOUBLE_EQ(result.partitions[1].cost.seconds(), 2.5);
  EXPECT_DOUBLE_EQ(result.partitions[2].cost.seconds(), 1.0);
  EXPECT_DOUBLE_EQ(total_cost(result.partitions).seconds(), 5.0);
}

// Checks that each charge comes with the placement of both sides: the
// path so far (the candidate placed included), or the cover.
class PlacementCheckingBoundaryCosts : public BoundaryCosts {
 public:
  BoundaryCharge charge(const DataflowGraph&, PostDfsIndex, const std::string& from,
                        const IndexSet* from_nodes, const IndexSet* to_nodes, const std::string& to,
                        const PlacedOperators* placement) override {
    ++calls;
    if (placement == nullptr) {
      ++mismatches;
      return {};
    }
    auto check = [&](const IndexSet* nodes, const std::string& backend) {
      if (nodes == nullptr) return;
      for (PostDfsIndex i : *nodes) {
        const std::optional<PlacedPartition> placed = (*placement)(i);
        if (!placed || placed->backend != backend || placed->nodes == nullptr ||
            !placed->nodes->contains(i)) {
          ++mismatches;
        }
      }
    };
    check(from_nodes, from);
    check(to_nodes, to);
    return {};
  }
  int calls = 0;
  int mismatches = 0;
};

TEST(ShortestPathTest, BoundariesAreChargedWithWhereBothSidesArePlaced) {
  SearchFixture f = chain_with_byoc_ends();
  PlacementCheckingBoundaryCosts boundaries;
  SearchResult result = f.search(false, &boundaries);
  EXPECT_GT(boundaries.calls, 0);
  const int searched = boundaries.calls;
  charge_boundaries(f.dfg(), result.partitions, boundaries);
  EXPECT_GT(boundaries.calls, searched);
  EXPECT_EQ(boundaries.mismatches, 0);
}

// A backend whose `follows` ops run in any layout, as native's elementwise
// ops do; its other ops run plain.
class FollowingOps : public testing::LayoutBackend {
 public:
  FollowingOps(std::string name, std::vector<EdgeLayout> layouts, std::string follows = "")
      : LayoutBackend(std::move(name), std::move(layouts)), follows_(std::move(follows)) {}
  bool runs_in_layout(const Graph&, const Node& node, EdgeLayout layout) const override {
    return layout == EdgeLayout::kPlain || node.op_type == follows_;
  }

 private:
  std::string follows_;
};

// Every conversion takes 1 ms.
class FixedConversions : public ConversionCosts {
 public:
  FixedConversions() : ConversionCosts(nullptr, "machine", 1) {}

 protected:
  double measure(const TensorType&, const LayoutChange&) override { return 1e-3; }
};

// x[1,16,8,8] -> a Relu -> b Abs -> c Neg, each a partition of its own: a
// on "blocked" (nChw16c, 1.0 ms) or "nhwc" (1.2 ms), b on a follower
// (1.0 ms), c on "nhwc" alone (1.0 ms).
TEST(ShortestPathTest, RoutesWhoseFollowersComputeInDifferentLayoutsStayApart) {
  Graph graph;
  graph.opset = 13;
  const TensorType type{DType::kFloat32, {1, 16, 8, 8}};
  ValueId x = graph.add_input("x", type);
  ValueId a = graph.add_value("a", type);
  graph.add_node("Relu", {x}, {a}, {}, "a");
  ValueId b = graph.add_value("b", type);
  graph.add_node("Abs", {a}, {b}, {}, "b");
  ValueId c = graph.add_value("c", type);
  graph.add_node("Neg", {b}, {c}, {}, "c");
  graph.add_output(c);
  SearchFixture f(std::move(graph));
  f.graph_backend("blocked", {"Relu"}, {.max_depth = 1})
      .graph_backend("nhwc", {"Relu", "Neg"}, {.max_depth = 1})
      .graph_backend("following", {"Abs"}, {.max_depth = 1});
  f.costs()
      .set_op_cost("blocked", "Relu", 1.0e-3)
      .set_op_cost("nhwc", "Relu", 1.2e-3)
      .set_op_cost("nhwc", "Neg", 1.0e-3)
      .set_op_cost("following", "Abs", 1.0e-3);
  const FollowingOps blocked("blocked", {EdgeLayout::kBlocked16, EdgeLayout::kPlain});
  const FollowingOps nhwc("nhwc", {EdgeLayout::kChannelsLast, EdgeLayout::kPlain});
  const FollowingOps following("following", {EdgeLayout::kPlain}, "Abs");
  FixedConversions conversions;
  LayoutBoundaryCosts boundaries({&blocked, &nhwc, &following}, conversions);
  SearchResult result = f.search(false, &boundaries);
  // After a on blocked, b computes in nChw16c and c converts twice (5 ms);
  // after a on nhwc, b computes in NHWC and nothing converts (3.2 ms). The
  // first is cheaper up to b: kept as one state, the second was lost.
  EXPECT_EQ(f.describe(result), (Lines{"nhwc:a", "following:b", "nhwc:c"}));
  charge_boundaries(f.dfg(), result.partitions, boundaries);
  EXPECT_NEAR(total_cost(result.partitions).seconds(), 3.2e-3, 1e-9);
}

// Twelve Relus of one input, summed one after another: the Relus are
// covered before the Adds that read them, so a covered set's frontier holds
// up to twelve Relus, each on native or byoc (4096 routes to one set). The
// routes with byoc Relus are the cheapest until their boundaries are paid,
// at the Adds: the all-native route must survive the cap to win.
Graph wide_fan_in() {
  GraphBuilder b;
  ValueId x = b.input("x");
  std::vector<ValueId> relus;
  for (int i = 0; i < 12; ++i) relus.push_back(b.op("Relu", {x}, "r" + std::to_string(i)));
  ValueId sum = relus[0];
  for (int i = 1; i < 12; ++i) sum = b.op("Add", {relus[i], sum}, "s" + std::to_string(i));
  b.output(sum);
  return std::move(b.graph());
}

TEST(ShortestPathTest, ManyFrontiersToOneCoveredSetAreCappedAndTheCheapestRouteKept) {
  SearchFixture f(wide_fan_in());
  f.native_singles().graph_backend("byoc", {"Relu"}, {.max_depth = 1});
  // A Relu on byoc saves 1 and pays 5 at its boundary with its native Add.
  f.costs().set_default_op_cost("native", 2.0).set_default_op_cost("byoc", 1.0);
  FixedBoundaryCosts boundaries(5.0);
  SearchResult result = f.search(false, &boundaries);
  EXPECT_GT(result.stats.routes_dropped, 0u);
  EXPECT_LT(result.stats.states_expanded, 2000u);
  ASSERT_EQ(result.partitions.size(), 23u);
  for (const ChosenPartition& partition : result.partitions) {
    EXPECT_EQ(partition.candidate.spec_name(), "native");
  }
  EXPECT_DOUBLE_EQ(result.total.seconds(), 46.0);
}

}  // namespace
}  // namespace collage
