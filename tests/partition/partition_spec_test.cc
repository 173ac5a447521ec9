#include "collage/partition/partition_spec.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collage/partition/partition_rule.h"
#include "partition/graph_builder.h"

namespace collage {
namespace {

using testing::GraphBuilder;
using testing::names_of;
using testing::set_of;

// Offers the same node sets, each under its own rule name, on every graph.
class FixedRule : public PartitionRule {
 public:
  using Offer = std::pair<std::vector<std::string>, std::string>;
  explicit FixedRule(std::vector<Offer> offers)
      : PartitionRule("fixed"), offers_(std::move(offers)) {}

  std::vector<CandidatePartition> candidates(const DataflowGraph& dfg,
                                             const PartitionSpecPtr& spec) const override {
    std::vector<CandidatePartition> out;
    for (const auto& [names, rule] : offers_) {
      out.push_back({SubGraph(dfg, set_of(dfg, names)), spec, rule});
    }
    return out;
  }

 private:
  std::vector<Offer> offers_;
};

// x -> a Relu -> b Abs (output)
Graph relu_abs() {
  GraphBuilder b;
  ValueId x = b.input("x");
  b.output(b.op("Abs", {b.op("Relu", {x}, "a")}, "b"));
  return std::move(b.graph());
}

PartitionRulePtr offering(std::vector<FixedRule::Offer> offers) {
  return std::make_shared<FixedRule>(std::move(offers));
}

TEST(PartitionSpecTest, TheMergeConfigDefaultsToTheConfig) {
  SubGraphConfig config;
  config.max_depth = 2;
  PartitionSpecPtr spec = make_partition_spec("onednn", nullptr, config);
  EXPECT_EQ(spec->name, "onednn");
  EXPECT_EQ(spec->merge_config.max_depth, 2u);
  EXPECT_EQ(spec->backend, nullptr);
}

TEST(PartitionSpecTest, AGivenMergeConfigIsKeptApartFromTheConfig) {
  SubGraphConfig config;
  config.max_exits = 1;
  SubGraphConfig merge;
  merge.allow_taps = true;
  PartitionSpecPtr spec = make_partition_spec("xnnpack", nullptr, config, nullptr, merge);
  EXPECT_EQ(spec->config.max_exits, 1u);
  EXPECT_FALSE(spec->config.allow_taps);
  EXPECT_EQ(spec->merge_config.max_exits, SubGraphConfig::kNoLimit);
  EXPECT_TRUE(spec->merge_config.allow_taps);
}

TEST(PartitionSpecTest, GatheringDropsCandidatesInvalidUnderTheSpecsConfig) {
  Graph graph = relu_abs();
  DataflowGraph dfg(graph);
  SubGraphConfig shallow;
  shallow.max_depth = 1;
  auto candidates = gather_candidates(
      dfg,
      make_partition_spec("lib", offering({{{"a", "b"}, "pair"}, {{"a"}, "single"}}), shallow));
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].rule_name, "single");
}

TEST(PartitionSpecTest, GatheringKeepsTheFirstCandidateOfEachNodeSet) {
  Graph graph = relu_abs();
  DataflowGraph dfg(graph);
  auto candidates = gather_candidates(
      dfg, make_partition_spec("lib",
                               offering({{{"a"}, "first"}, {{"b"}, "other"}, {{"a"}, "second"}})));
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(candidates[0].rule_name, "first");
  EXPECT_EQ(candidates[1].rule_name, "other");
}

TEST(PartitionSpecTest, GatheringOverSeveralSpecsGoesSpecBySpecInTheGivenOrder) {
  Graph graph = relu_abs();
  DataflowGraph dfg(graph);
  std::vector<PartitionSpecPtr> specs = {
      make_partition_spec("zeta", offering({{{"b"}, "op"}, {{"a"}, "op"}})),
      make_partition_spec("alpha", offering({{{"a"}, "op"}}))};
  std::vector<std::string> found;
  for (const CandidatePartition& candidate : gather_candidates(dfg, specs)) {
    found.push_back(candidate.spec_name() + ":" + names_of(dfg, candidate.sub_graph.inside())[0]);
  }
  EXPECT_EQ(found, (std::vector<std::string>{"zeta:b", "zeta:a", "alpha:a"}));
}

}  // namespace
}  // namespace collage
