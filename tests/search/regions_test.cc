// The baselines' regions: greedy partitions of one backend merged into the
// largest regions it compiles, without a cycle between partitions.
#include "collage/search/regions.h"

#include <gtest/gtest.h>

#include "collage/backends/backend.h"
#include "collage/search/strategy.h"
#include "search/search_fixture.h"

namespace collage {
namespace {

using testing::GraphBuilder;
using testing::SearchFixture;
using testing::SmallRegionsBackend;
using Lines = std::vector<std::string>;

// Greedy placement of `graph` on a graph backend over Relu and Add
// (candidates of depth at most 2) that compiles at most `max_nodes` nodes,
// native the fallback, then merged into regions.
Lines regions(Graph graph, std::size_t max_nodes) {
  SearchFixture fixture(std::move(graph));
  fixture.native_singles().graph_backend("relu", {"Relu", "Add"}, SubGraphConfig{.max_depth = 2});
  SmallRegionsBackend backend(max_nodes, {"Abs"});
  auto relu = std::make_shared<PartitionSpec>(*fixture.spec("relu"));
  relu->backend = &backend;
  auto cover = greedy_cover(fixture.dfg(), {relu}, fixture.spec("native"));
  return fixture.describe(merge_into_regions(fixture.dfg(), cover));
}

// x -> a -> b -> c -> d -> e -> f, all Relu.
Graph relu_chain() {
  GraphBuilder b;
  ValueId v = b.input("x");
  for (const char* name : {"a", "b", "c", "d", "e", "f"}) v = b.op("Relu", {v}, name);
  b.output(v);
  return std::move(b.graph());
}

TEST(MergeIntoRegionsTest, JoinsTheBoundedCandidatesIntoOneRegion) {
  EXPECT_EQ(regions(relu_chain(), 100), Lines{"relu:a,b,c,d,e,f"});
}

TEST(MergeIntoRegionsTest, SplitsARegionTheBackendDoesNotCompileUntilThePiecesDo) {
  // The cover is {a,b} {c,d} {e,f}. Six nodes do not compile; the halves
  // are the first partition and the other two, whose four nodes compile
  // when the backend takes four, and are split again when it takes three.
  EXPECT_EQ(regions(relu_chain(), 4), (Lines{"relu:a,b", "relu:c,d,e,f"}));
  EXPECT_EQ(regions(relu_chain(), 3), (Lines{"relu:a,b", "relu:c,d", "relu:e,f"}));
}

TEST(MergeIntoRegionsTest, NeverJoinsPartitionsAroundAnotherBackendsNode) {
  // a feeds the Add s directly and through the native b: {a, s} would have
  // to run both before and after b.
  GraphBuilder b;
  ValueId a = b.op("Relu", {b.input("x")}, "a");
  b.output(b.op("Add", {a, b.op("Abs", {a}, "b")}, "s"));
  EXPECT_EQ(regions(std::move(b.graph()), 100), (Lines{"relu:a", "native:b", "relu:s"}));
}

TEST(MergeIntoRegionsTest, JoinsAForkAndItsBranches) {
  // a forks into two chains of Relu that an Abs (native) follows: the fork
  // and both chains are one region with two outputs.
  GraphBuilder b;
  ValueId a = b.op("Relu", {b.input("x")}, "a");
  ValueId left = b.op("Relu", {b.op("Relu", {a}, "l1")}, "l2");
  ValueId right = b.op("Relu", {b.op("Relu", {a}, "r1")}, "r2");
  b.output(b.op("Abs", {left}, "s"));
  b.output(b.op("Abs", {right}, "t"));
  EXPECT_EQ(regions(std::move(b.graph()), 100),
            (Lines{"relu:a,l1,l2,r1,r2", "native:s", "native:t"}));
}

}  // namespace
}  // namespace collage
