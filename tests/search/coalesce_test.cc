#include "collage/search/coalesce.h"

#include <gtest/gtest.h>

#include "collage/cost/function_cost_estimator.h"
#include "search/search_fixture.h"

namespace collage {
namespace {

using testing::chain3;
using testing::GraphBuilder;
using testing::ops_of_type;
using testing::SearchFixture;
using testing::set_of;
using Lines = std::vector<std::string>;

// A library backend that runs each op alone is chosen for all three ops, one
// partition each; every partition costs 1 more than its ops.
SearchFixture library_chain(SubGraphConfig config) {
  SearchFixture f(chain3());
  f.native_singles().add_spec(
      "lib", make_library_rule({}, ops_of_type({"Relu", "Abs", "Neg"}), config), config);
  f.costs().set_default_op_cost("native", 10.0).set_default_op_cost("lib", 1.0);
  f.costs().set_partition_overhead(1.0);
  return f;
}

TEST(CoalesceTest, MergesTouchingPartitionsOfTheSameSpec) {
  SearchFixture f = library_chain({});
  SearchResult result = f.search();
  ASSERT_EQ(f.describe(result), (Lines{"lib:a", "lib:b", "lib:c"}));
  auto merged = coalesce(f.dfg(), result.partitions, f.costs());
  EXPECT_EQ(f.describe(merged), Lines{"lib:a,b,c"});
  EXPECT_EQ(merged[0].candidate.rule_name, "coalesce");
  // Re-estimated: three ops and one overhead.
  EXPECT_DOUBLE_EQ(merged[0].cost.seconds(), 4.0);
}

TEST(CoalesceTest, NeverBreaksTheSpecConfig) {
  SearchFixture f = library_chain({.max_depth = 2});
  SearchResult result = f.search();
  auto merged = coalesce(f.dfg(), result.partitions, f.costs());
  EXPECT_EQ(f.describe(merged), (Lines{"lib:a,b", "lib:c"}));
  for (const ChosenPartition& partition : merged) {
    EXPECT_TRUE(partition.candidate.sub_graph.is_valid(f.dfg(), {.max_depth = 2}));
  }
}

TEST(CoalesceTest, MergesPastTheCandidateLimitsUpToTheMergeConfig) {
  // Candidates of depth 1; merged partitions may be of any depth.
  SearchFixture f(chain3());
  const SubGraphConfig candidates{.max_depth = 1};
  f.native_singles().add_spec(
      "lib", make_library_rule({}, ops_of_type({"Relu", "Abs", "Neg"}), candidates), candidates,
      SubGraphConfig{});
  f.costs().set_default_op_cost("native", 10.0).set_default_op_cost("lib", 1.0);
  f.costs().set_partition_overhead(1.0);
  SearchResult result = f.search();
  ASSERT_EQ(f.describe(result), (Lines{"lib:a", "lib:b", "lib:c"}));
  EXPECT_EQ(f.describe(coalesce(f.dfg(), result.partitions, f.costs())), Lines{"lib:a,b,c"});
}

TEST(CoalesceTest, KeepsPartitionsOfDifferentSpecsApart) {
  SearchFixture f(chain3());
  f.native_singles().graph_backend("byoc", {"Abs"});
  f.costs().set_default_op_cost("native", 1.0).set_default_op_cost("byoc", 0.1);
  SearchResult result = f.search();
  auto merged = coalesce(f.dfg(), result.partitions, f.costs());
  EXPECT_EQ(f.describe(merged), (Lines{"native:a", "byoc:b", "native:c"}));
}

TEST(CoalesceTest, KeepsPartitionsApartWhenTheMergeIsSlowerOrInvalid) {
  SearchFixture f = library_chain({});
  SearchResult result = f.search();
  FunctionCostEstimator refuse_merges([](const DataflowGraph& dfg, const CandidatePartition& c) {
    if (c.sub_graph.operator_count(dfg) > 2) return Cost::invalid("too big");
    return Cost::value(100.0);
  });
  auto merged = coalesce(f.dfg(), result.partitions, refuse_merges);
  EXPECT_EQ(f.describe(merged), (Lines{"lib:a", "lib:b", "lib:c"}));
}

TEST(CoalesceTest, NeverMergesIntoACycleBetweenPartitions) {
  // x -> a1 Relu -> b1 Neg (output); x -> b2 Abs -> a2 Add(b2, a1) (output).
  // Merging {a1} and {a2} (touching, convex) would make {a1, a2} and
  // {b1, b2} feed each other.
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId a1 = b.op("Relu", {x}, "a1");
  b.output(b.op("Neg", {a1}, "b1"));
  ValueId b2 = b.op("Abs", {x}, "b2");
  b.output(b.op("Add", {b2, a1}, "a2"));
  SearchFixture f(std::move(b.graph()));
  // a1 feeds b1 outside and a2 inside: a tap the fast backend accepts.
  SubGraphConfig fast_config{.allow_taps = true};
  f.native_singles().graph_backend("fast", {"Relu", "Add"}, fast_config);
  f.costs().set_default_op_cost("native", 1.0).set_default_op_cost("fast", 1.0);
  const DataflowGraph& dfg = f.dfg();
  std::vector<ChosenPartition> chosen = {
      {{SubGraph(dfg, set_of(dfg, {"a1"})), f.spec("fast"), "op"}, Cost::value(1.0)},
      {{SubGraph(dfg, set_of(dfg, {"b1", "b2"})), f.spec("native"), "op"}, Cost::value(2.0)},
      {{SubGraph(dfg, set_of(dfg, {"a2"})), f.spec("fast"), "op"}, Cost::value(1.0)},
  };
  ASSERT_TRUE(SubGraph(dfg, set_of(dfg, {"a1", "a2"})).is_valid(dfg, fast_config));
  auto merged = coalesce(dfg, chosen, f.costs());
  EXPECT_EQ(f.describe(merged), (Lines{"fast:a1", "native:b1,b2", "fast:a2"}));
  EXPECT_EQ(f.costs().estimate_count(), 0u);
}

}  // namespace
}  // namespace collage
