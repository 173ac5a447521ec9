#include "collage/partition/partition_rule.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "collage/partition/standard_rules.h"
#include "partition/graph_builder.h"

namespace collage {
namespace {

using testing::GraphBuilder;
using testing::index_of;
using testing::names_of;
using testing::set_of;

bool any_op(const Graph&, const Node&) { return true; }

NodePredicate ops_of_type(std::set<std::string> types) {
  return [types = std::move(types)](const Graph&, const Node& node) {
    return types.count(node.op_type) != 0;
  };
}

// The inside sets of `candidates`, as sorted lists of node names.
std::set<std::vector<std::string>> node_sets(const DataflowGraph& dfg,
                                             const std::vector<CandidatePartition>& candidates) {
  std::set<std::vector<std::string>> sets;
  for (const CandidatePartition& candidate : candidates) {
    auto names = names_of(dfg, candidate.sub_graph.inside());
    std::sort(names.begin(), names.end());
    sets.insert(names);
  }
  return sets;
}

std::vector<CandidatePartition> run_rule(const DataflowGraph& dfg, PartitionRulePtr rule,
                                         SubGraphConfig config = {}) {
  return gather_candidates(dfg, make_partition_spec("test", std::move(rule), config));
}

// x -> a Relu -> b Abs -> c Neg (output)
Graph chain3() {
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId a = b.op("Relu", {x}, "a");
  ValueId bb = b.op("Abs", {a}, "b");
  b.output(b.op("Neg", {bb}, "c"));
  return std::move(b.graph());
}

TEST(PartitionRuleTest, OpPredicateRuleMakesOneCandidatePerSupportedNode) {
  Graph graph = chain3();
  DataflowGraph dfg(graph);
  auto candidates = run_rule(dfg, std::make_shared<OpPredicateRule>(ops_of_type({"Relu", "Neg"})));
  EXPECT_EQ(node_sets(dfg, candidates), (std::set<std::vector<std::string>>{{"a"}, {"c"}}));
  EXPECT_EQ(candidates[0].rule_name, "op");
  EXPECT_EQ(candidates[0].spec_name(), "test");
}

TEST(PartitionRuleTest, PatternRuleMakesACandidatePerMatchLabelledWithItsName) {
  Graph graph = chain3();
  DataflowGraph dfg(graph);
  Pattern relu_abs = Pattern::op("Abs", {Pattern::op("Relu")});
  auto candidates = run_rule(dfg, std::make_shared<PatternRule>("relu_abs", relu_abs));
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(names_of(dfg, candidates[0].sub_graph.inside()), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(candidates[0].sub_graph.label(), "relu_abs");
  EXPECT_EQ(candidates[0].rule_name, "relu_abs");
}

TEST(PartitionRuleTest, PatternRulePredicateCanRefuseAMatch) {
  Graph graph = chain3();
  DataflowGraph dfg(graph);
  Pattern relu_abs = Pattern::op("Abs", {Pattern::op("Relu")});
  auto refuse = [](const Graph&, const std::vector<NodeId>&) { return false; };
  EXPECT_TRUE(run_rule(dfg, std::make_shared<PatternRule>("relu_abs", relu_abs, refuse)).empty());
}

TEST(PartitionRuleTest, UnionRuleKeepsTheFirstCandidateOfEachSet) {
  Graph graph = chain3();
  DataflowGraph dfg(graph);
  auto first = std::make_shared<OpPredicateRule>(any_op, "first");
  auto second = std::make_shared<OpPredicateRule>(any_op, "second");
  auto candidates =
      run_rule(dfg, std::make_shared<UnionRule>(std::vector<PartitionRulePtr>{first, second}));
  ASSERT_EQ(candidates.size(), 3u);
  for (const auto& candidate : candidates) EXPECT_EQ(candidate.rule_name, "first");
}

TEST(PartitionRuleTest, OnlyValidRuleDropsCandidatesInvalidUnderItsConfig) {
  Graph graph = chain3();
  DataflowGraph dfg(graph);
  auto whole = std::make_shared<PatternRule>(
      "whole", Pattern::op("Neg", {Pattern::op("Abs", {Pattern::op("Relu")})}));
  EXPECT_EQ(std::make_shared<OnlyValidRule>(whole, SubGraphConfig{.max_depth = 3})
                ->candidates(dfg, make_partition_spec("test", whole))
                .size(),
            1u);
  EXPECT_TRUE(std::make_shared<OnlyValidRule>(whole, SubGraphConfig{.max_depth = 2})
                  ->candidates(dfg, make_partition_spec("test", whole))
                  .empty());
}

TEST(PartitionRuleTest, GatherCandidatesDropsCandidatesInvalidUnderTheSpecConfig) {
  Graph graph = chain3();
  DataflowGraph dfg(graph);
  auto whole = std::make_shared<PatternRule>(
      "whole", Pattern::op("Neg", {Pattern::op("Abs", {Pattern::op("Relu")})}));
  EXPECT_TRUE(run_rule(dfg, whole, {.max_depth = 2}).empty());
}

TEST(PartitionRuleTest, CombineRuleGrowsAChainToAFixedPoint) {
  Graph graph = chain3();
  DataflowGraph dfg(graph);
  auto candidates = run_rule(dfg, make_graph_rule(any_op, {}));
  EXPECT_EQ(node_sets(dfg, candidates),
            (std::set<std::vector<std::string>>{
                {"a"}, {"b"}, {"c"}, {"a", "b"}, {"b", "c"}, {"a", "b", "c"}}));
}

TEST(PartitionRuleTest, CombineRuleStopsAfterMaxRounds) {
  Graph graph = chain3();
  DataflowGraph dfg(graph);
  auto candidates = run_rule(dfg, make_graph_rule(any_op, {}, /*max_rounds=*/1));
  EXPECT_EQ(node_sets(dfg, candidates),
            (std::set<std::vector<std::string>>{{"a"}, {"b"}, {"c"}, {"a", "b"}, {"b", "c"}}));
}

TEST(PartitionRuleTest, CombineRuleGrowsOnlyWithinTheSpecConfig) {
  Graph graph = chain3();
  DataflowGraph dfg(graph);
  auto candidates = run_rule(dfg, make_graph_rule(any_op, {.max_depth = 2}), {.max_depth = 2});
  EXPECT_EQ(node_sets(dfg, candidates),
            (std::set<std::vector<std::string>>{{"a"}, {"b"}, {"c"}, {"a", "b"}, {"b", "c"}}));
}

TEST(PartitionRuleTest, CombineRuleMergesAnOldUpstreamWithANewDownstream) {
  // x -> conv -> relu -> add(relu, conv). With one exit allowed, {conv, relu}
  // has two exits and {conv, add} is not convex, so {conv, relu, add} can
  // only come from the first-round {conv} and the second-round {relu, add}.
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId conv = b.op("Conv", {x}, "conv");
  ValueId relu = b.op("Relu", {conv}, "relu");
  b.output(b.op("Add", {relu, conv}, "add"));
  DataflowGraph dfg(b.graph());
  SubGraphConfig config{.max_exits = 1};
  auto candidates = run_rule(dfg, make_fusing_rule(any_op, config), config);
  EXPECT_TRUE(node_sets(dfg, candidates).count({"add", "conv", "relu"}));
  EXPECT_FALSE(node_sets(dfg, candidates).count({"conv", "relu"}));
}

// Three chains of `length` Relus from x, joined by one Concat: every
// combination of a suffix of each chain (or none) with the Concat is a
// connected candidate, (length + 1)^3 of them, beside the chains' own.
Graph three_chains_joined(int length) {
  GraphBuilder b;
  ValueId x = b.input("x");
  std::vector<ValueId> ends;
  for (int chain = 0; chain < 3; ++chain) {
    ValueId v = x;
    for (int i = 0; i < length; ++i) v = b.op("Relu", {v}, fmt::format("r{}{}", chain, i));
    ends.push_back(v);
  }
  b.output(b.op("Concat", ends, "cat"));
  return std::move(b.graph());
}

PartitionRulePtr pairwise_rule(std::size_t max_per_node) {
  std::vector<std::shared_ptr<const CombinerRule>> combiners = {
      std::make_shared<ByKindCombiner>(OpKind::kOpaque, OpKind::kOpaque)};
  return std::make_shared<CombineRule>(std::make_shared<OpPredicateRule>(any_op), combiners,
                                       CombineRule::kDefaultMaxRounds, "combine", max_per_node);
}

TEST(PartitionRuleTest, CombineRuleKeepsEveryCombinationBelowItsCapPerNode) {
  // The Concat lies in 3^3 = 27 candidates, each chain of two in 3 more.
  Graph graph = three_chains_joined(2);
  DataflowGraph dfg(graph);
  auto candidates = run_rule(dfg, pairwise_rule(CombineRule::kDefaultMaxPerNode));
  EXPECT_EQ(candidates.size(), 27u + 3u * 3u);
}

TEST(PartitionRuleTest, CombineRuleStopsGrowingANodeThatLiesInItsCapOfCandidates) {
  // Uncapped, the Concat would lie in 5^3 = 125 candidates.
  Graph graph = three_chains_joined(4);
  DataflowGraph dfg(graph);
  const std::size_t cap = 8;
  auto candidates = run_rule(dfg, pairwise_rule(cap));
  std::map<std::string, std::size_t> per_node;
  for (const CandidatePartition& candidate : candidates) {
    for (const std::string& name : names_of(dfg, candidate.sub_graph.inside())) ++per_node[name];
  }
  // Every node keeps its own candidate, and none lies in more than the cap.
  EXPECT_EQ(per_node.size(), 13u);
  for (const auto& [name, count] : per_node) EXPECT_LE(count, cap) << name;
  EXPECT_TRUE(node_sets(dfg, candidates).count({"cat"}));
  // The smaller candidates come first: the Concat with one Relu is kept.
  EXPECT_TRUE(node_sets(dfg, candidates).count({"cat", "r03"}));
}

TEST(PartitionRuleTest, FusingRuleNeverPutsTwoComplexOpsTogether) {
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId c1 = b.op("Conv", {x}, "c1");
  ValueId r1 = b.op("Relu", {c1}, "r1");
  b.output(b.op("Conv", {r1}, "c2"));
  DataflowGraph dfg(b.graph());
  auto candidates = run_rule(dfg, make_fusing_rule(any_op, {}));
  EXPECT_EQ(node_sets(dfg, candidates),
            (std::set<std::vector<std::string>>{{"c1"}, {"r1"}, {"c2"}, {"c1", "r1"}}));
}

TEST(PartitionRuleTest, FanInCombinerMergesAConcatWithAllItsProducers) {
  // Two convs feed a concat: kind rules never merge a conv into a concat,
  // the fan-in rule merges both at once.
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId p = b.op("Conv", {x}, "p");
  ValueId q = b.op("Conv", {x}, "q");
  b.output(b.op("Concat", {p, q}, "cat"));
  DataflowGraph dfg(b.graph());
  auto singles = std::make_shared<OpPredicateRule>(any_op);
  std::vector<std::shared_ptr<const CombinerRule>> combiners = {
      std::make_shared<FanInCombiner>("Concat", OpKind::kOutElementwiseFusable)};
  auto candidates = run_rule(dfg, std::make_shared<CombineRule>(singles, combiners));
  EXPECT_EQ(node_sets(dfg, candidates),
            (std::set<std::vector<std::string>>{{"p"}, {"q"}, {"cat"}, {"cat", "p", "q"}}));
}

TEST(PartitionRuleTest, FanOutCombinerMergesASplitWithAllItsConsumers) {
  GraphBuilder b;
  ValueId x = b.input("x");
  auto parts = b.ops("Split", {x}, "split", 2);
  b.output(b.op("Relu", {parts[0]}, "r0"));
  b.output(b.op("Relu", {parts[1]}, "r1"));
  DataflowGraph dfg(b.graph());
  auto singles = std::make_shared<OpPredicateRule>(any_op);
  std::vector<std::shared_ptr<const CombinerRule>> combiners = {
      std::make_shared<FanOutCombiner>("Split", OpKind::kInjective)};
  auto candidates = run_rule(dfg, std::make_shared<CombineRule>(singles, combiners));
  EXPECT_TRUE(node_sets(dfg, candidates).count({"r0", "r1", "split"}));
  EXPECT_FALSE(node_sets(dfg, candidates).count({"r0", "split"}));
}

TEST(PartitionRuleTest, FanInCombinerSkipsProducersTheSpecCannotRun) {
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId p = b.op("Relu", {x}, "p");
  ValueId q = b.op("Abs", {x}, "q");
  b.output(b.op("Concat", {p, q}, "cat"));
  DataflowGraph dfg(b.graph());
  auto singles = std::make_shared<OpPredicateRule>(ops_of_type({"Relu", "Concat"}));
  std::vector<std::shared_ptr<const CombinerRule>> combiners = {
      std::make_shared<FanInCombiner>("Concat", OpKind::kInjective)};
  auto candidates = run_rule(dfg, std::make_shared<CombineRule>(singles, combiners));
  EXPECT_EQ(node_sets(dfg, candidates),
            (std::set<std::vector<std::string>>{{"p"}, {"cat"}, {"cat", "p"}}));
}

TEST(PartitionRuleTest, ConstantCombinerAddsTheConstantsACandidateReads) {
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId w = b.constant("w");
  b.output(b.op("Mul", {x, w}, "mul"));
  DataflowGraph dfg(b.graph());
  auto singles = std::make_shared<OpPredicateRule>(any_op);
  std::vector<std::shared_ptr<const CombinerRule>> combiners = {
      std::make_shared<ConstantCombiner>()};
  auto candidates = run_rule(dfg, std::make_shared<CombineRule>(singles, combiners));
  ASSERT_EQ(candidates.size(), 2u);
  PostDfsIndex w_index = *dfg.index_of_value(w);
  EXPECT_TRUE(candidates[1].sub_graph.inside().contains(w_index));
  EXPECT_EQ(candidates[1].sub_graph.operator_count(dfg), 1u);
  EXPECT_EQ(candidates[1].rule_name, "constants");
}

TEST(PartitionRuleTest, HostRuleCoversEachInputAndConstant) {
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId w = b.constant("w");
  b.output(b.op("Mul", {x, w}, "mul"));
  DataflowGraph dfg(b.graph());
  auto candidates = run_rule(dfg, std::make_shared<HostRule>());
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(candidates[0].sub_graph.inside(), IndexSet(3, {0}));
  EXPECT_EQ(candidates[1].sub_graph.inside(), IndexSet(3, {1}));
}

TEST(PartitionRuleTest, LibraryRuleOffersPatternsAndSingleOps) {
  Graph graph = chain3();
  DataflowGraph dfg(graph);
  std::vector<PatternEntry> patterns = {
      {"relu_abs", Pattern::op("Abs", {Pattern::op("Relu")}), {}}};
  auto candidates = run_rule(dfg, make_library_rule(patterns, ops_of_type({"Relu", "Abs"}), {}));
  EXPECT_EQ(node_sets(dfg, candidates),
            (std::set<std::vector<std::string>>{{"a", "b"}, {"a"}, {"b"}}));
}

TEST(PartitionRuleTest, GraphRuleGrowsOnlyOverSupportedNodes) {
  Graph graph = chain3();
  DataflowGraph dfg(graph);
  auto candidates = run_rule(dfg, make_graph_rule(ops_of_type({"Relu", "Neg"}), {}));
  // a and c are not connected through supported nodes.
  EXPECT_EQ(node_sets(dfg, candidates), (std::set<std::vector<std::string>>{{"a"}, {"c"}}));
}

}  // namespace
}  // namespace collage
