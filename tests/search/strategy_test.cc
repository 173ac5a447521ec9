// Greedy placement (single:<b>, greedy:<b1>,...): the regions a backend
// takes, and what happens when one of them does not compile.
#include "collage/search/strategy.h"

#include <gtest/gtest.h>

#include "collage/backends/backend.h"
#include "search/search_fixture.h"

namespace collage {
namespace {

using testing::GraphBuilder;
using testing::SearchFixture;
using testing::SmallRegionsBackend;

// x -> a -> b -> c -> d (Relu chain)
Graph relu_chain() {
  GraphBuilder b;
  ValueId v = b.input("x");
  for (const char* name : {"a", "b", "c", "d"}) v = b.op("Relu", {v}, name);
  b.output(v);
  return b.graph();
}

std::vector<std::string> greedy(std::size_t max_nodes) {
  SearchFixture fixture(relu_chain());
  fixture.native_singles().graph_backend("small", {"Relu"});
  SmallRegionsBackend backend(max_nodes);
  auto small = std::make_shared<PartitionSpec>(*fixture.spec("small"));
  small->backend = &backend;
  return fixture.describe(greedy_cover(fixture.dfg(), {small}, fixture.spec("native")));
}

TEST(GreedyCoverTest, TakesTheLargestRegionTheBackendCompiles) {
  EXPECT_EQ(greedy(4), (std::vector<std::string>{"small:a,b,c,d"}));
}

TEST(GreedyCoverTest, FallsBackToSmallerRegionsWhenTheLargestDoesNotCompile) {
  EXPECT_EQ(greedy(2), (std::vector<std::string>{"small:a,b", "small:c,d"}));
}

TEST(GreedyCoverTest, LeavesToTheFallbackWhatTheBackendCannotCompileAtAll) {
  EXPECT_EQ(greedy(0), (std::vector<std::string>{"native:a", "native:b", "native:c", "native:d"}));
}

}  // namespace
}  // namespace collage
