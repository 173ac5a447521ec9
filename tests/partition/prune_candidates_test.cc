#include "collage/partition/prune_candidates.h"

#include <gtest/gtest.h>

#include "collage/partition/partition_rule.h"
#include "collage/partition/partition_spec.h"
#include "partition/graph_builder.h"

namespace collage {
namespace {

using testing::GraphBuilder;

// x -> a -> b -> c -> d (output)
Graph chain4() {
  GraphBuilder b;
  ValueId v = b.input("x");
  for (const char* name : {"a", "b", "c", "d"}) v = b.op("Relu", {v}, name);
  b.output(v);
  return std::move(b.graph());
}

CandidatePartition candidate(const DataflowGraph& dfg, const PartitionSpecPtr& spec,
                             std::initializer_list<PostDfsIndex> inside) {
  return {SubGraph(dfg, IndexSet(dfg.size(), inside)), spec, "test"};
}

TEST(PruneCandidatesTest, DropsCandidatesStrictlyInsideAnotherOfTheSameSpec) {
  Graph graph = chain4();
  DataflowGraph dfg(graph);
  auto spec = make_partition_spec("s", nullptr);
  auto kept = prune_candidates({candidate(dfg, spec, {1, 2}), candidate(dfg, spec, {1, 2, 3}),
                                candidate(dfg, spec, {2, 3}), candidate(dfg, spec, {3, 4})});
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].sub_graph.inside(), IndexSet(5, {1, 2, 3}));
  EXPECT_EQ(kept[1].sub_graph.inside(), IndexSet(5, {3, 4}));
}

TEST(PruneCandidatesTest, KeepsSingleNodeCandidates) {
  Graph graph = chain4();
  DataflowGraph dfg(graph);
  auto spec = make_partition_spec("s", nullptr);
  auto kept = prune_candidates({candidate(dfg, spec, {1}), candidate(dfg, spec, {1, 2})});
  EXPECT_EQ(kept.size(), 2u);
}

TEST(PruneCandidatesTest, KeepsCandidatesInsideOnesOfAnotherSpec) {
  Graph graph = chain4();
  DataflowGraph dfg(graph);
  auto big = make_partition_spec("big", nullptr);
  auto small = make_partition_spec("small", nullptr);
  auto kept = prune_candidates({candidate(dfg, big, {1, 2, 3}), candidate(dfg, small, {1, 2})});
  EXPECT_EQ(kept.size(), 2u);
}

}  // namespace
}  // namespace collage
