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

class NoKernel : public Kernel {
 public:
  void run(std::span<const Tensor>, std::span<Tensor>) override {}
};

// A graph-style backend that runs every op but compiles only partitions of
// at most `max_nodes` nodes, like XNNPACK with a region whose values would
// need two layouts.
class SmallRegionsBackend : public Backend {
 public:
  explicit SmallRegionsBackend(std::size_t max_nodes) : max_nodes_(max_nodes) {}
  std::string name() const override { return "small"; }
  std::string version() const override { return "1"; }
  BackendStyle style() const override { return BackendStyle::kGraph; }
  bool supports(const Graph&, const Node&) const override { return true; }
  std::string describe_support() const override { return "everything, in small regions"; }
  Result<std::unique_ptr<Kernel>> compile(const Graph& partition,
                                          const CompileOptions&) const override {
    if (partition.num_nodes() > max_nodes_) return Failure{"region too large"};
    return std::unique_ptr<Kernel>(std::make_unique<NoKernel>());
  }

 private:
  std::size_t max_nodes_;
};

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
