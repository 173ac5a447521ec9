#include "collage/partition/partition_order.h"

#include <gtest/gtest.h>

#include "partition/graph_builder.h"

namespace collage {
namespace {

using testing::GraphBuilder;
using testing::set_of;

// x -> a1 -> b1 (output); x -> b2 -> a2 (output). {a1, a2} and {b1, b2} are
// each convex, but a1 feeds b1 and b2 feeds a2.
Graph crossing() {
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId a1 = b.op("Relu", {x}, "a1");
  ValueId b2 = b.op("Abs", {x}, "b2");
  b.output(b.op("Neg", {a1}, "b1"));
  b.output(b.op("Exp", {b2}, "a2"));
  return std::move(b.graph());
}

TEST(PartitionOrderTest, OrdersPartitionsAfterThoseThatFeedThem) {
  Graph graph = crossing();
  DataflowGraph dfg(graph);
  // Listed consumers first; the order puts producers first.
  std::vector<IndexSet> partitions = {set_of(dfg, {"b1"}), set_of(dfg, {"a2"}),
                                      set_of(dfg, {"a1", "b2"})};
  auto order = order_partitions(dfg, partitions);
  ASSERT_TRUE(order.has_value());
  ASSERT_EQ(order->size(), 3u);
  EXPECT_EQ((*order)[0], 2u);
  EXPECT_FALSE(partitions_form_cycle(dfg, partitions));
}

TEST(PartitionOrderTest, DetectsACycleBetweenConvexPartitions) {
  Graph graph = crossing();
  DataflowGraph dfg(graph);
  std::vector<IndexSet> partitions = {set_of(dfg, {"a1", "a2"}), set_of(dfg, {"b1", "b2"})};
  EXPECT_TRUE(partitions_form_cycle(dfg, partitions));
  EXPECT_FALSE(order_partitions(dfg, partitions).has_value());
}

TEST(PartitionOrderTest, SeesCyclesThroughNodesOutsideEveryPartition) {
  // x -> a -> m -> b -> c (output): {a, c} leaves through m and b and comes
  // back; with b in another partition, {a, c} and {b} feed each other.
  GraphBuilder b;
  ValueId x = b.input("x");
  ValueId a = b.op("Relu", {x}, "a");
  ValueId m = b.op("Abs", {a}, "m");
  ValueId bb = b.op("Neg", {m}, "b");
  b.output(b.op("Exp", {bb}, "c"));
  DataflowGraph dfg(b.graph());
  EXPECT_TRUE(partitions_form_cycle(dfg, {set_of(dfg, {"a", "c"}), set_of(dfg, {"b"})}));
}

}  // namespace
}  // namespace collage
