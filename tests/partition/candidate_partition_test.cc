#include "collage/partition/candidate_partition.h"

#include <gtest/gtest.h>

#include "collage/partition/partition_spec.h"
#include "partition/graph_builder.h"

namespace collage {
namespace {

using testing::GraphBuilder;
using testing::set_of;

// x -> a Relu -> b Abs (output)
Graph relu_abs() {
  GraphBuilder b;
  ValueId x = b.input("x");
  b.output(b.op("Abs", {b.op("Relu", {x}, "a")}, "b"));
  return std::move(b.graph());
}

TEST(CandidatePartitionTest, ItsSpecNameIsTheNameOfTheSpecItBelongsTo) {
  Graph graph = relu_abs();
  DataflowGraph dfg(graph);
  CandidatePartition candidate{SubGraph(dfg, set_of(dfg, {"a"})),
                               make_partition_spec("onednn", nullptr), "op"};
  EXPECT_EQ(candidate.spec_name(), "onednn");
  EXPECT_EQ(candidate.rule_name, "op");
}

TEST(CandidatePartitionTest, TextIsTheSpecNameThenTheSubGraph) {
  Graph graph = relu_abs();
  DataflowGraph dfg(graph);
  PartitionSpecPtr spec = make_partition_spec("onednn", nullptr);
  CandidatePartition labelled{SubGraph(dfg, set_of(dfg, {"a", "b"}), "relu_abs"), spec, "fused"};
  EXPECT_EQ(labelled.to_string(), "onednn:relu_abs{1,2}");
  CandidatePartition unlabelled{SubGraph(dfg, set_of(dfg, {"a", "b"})), spec, "fused"};
  EXPECT_EQ(unlabelled.to_string(), "onednn:" + unlabelled.sub_graph.to_string());
  EXPECT_EQ(unlabelled.to_string(), "onednn:Relu+Abs{1,2}");
}

TEST(CandidatePartitionTest, TheSpecLivesAsLongAsACandidateOfIt) {
  Graph graph = relu_abs();
  DataflowGraph dfg(graph);
  PartitionSpecPtr spec = make_partition_spec("xnnpack", nullptr);
  std::weak_ptr<const PartitionSpec> watch = spec;
  CandidatePartition candidate{SubGraph(dfg, set_of(dfg, {"b"})), spec, "op"};
  spec.reset();
  EXPECT_FALSE(watch.expired());
  EXPECT_EQ(candidate.spec_name(), "xnnpack");
}

}  // namespace
}  // namespace collage
