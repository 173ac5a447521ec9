#include "collage/search/backend_spec.h"

#include <gtest/gtest.h>

namespace collage {
namespace {

// A backend that claims every node and compiles nothing: only its style
// matters to the spec.
class StyledBackend : public Backend {
 public:
  explicit StyledBackend(BackendStyle style) : style_(style) {}
  std::string name() const override { return "styled"; }
  std::string version() const override { return "1"; }
  BackendStyle style() const override { return style_; }
  bool supports(const Graph&, const Node&) const override { return true; }
  std::string describe_support() const override { return "everything"; }
  Result<std::unique_ptr<Kernel>> compile(const Graph&, const CompileOptions&) const override {
    return Failure{"compiles nothing"};
  }

 private:
  BackendStyle style_;
};

TEST(BackendSpecTest, LibraryPartitionsReturnOneTensorEvenWhenMerged) {
  StyledBackend library(BackendStyle::kLibrary);
  PartitionSpecPtr spec = make_backend_spec(library, SpecOptions{.max_exits = 4});
  EXPECT_EQ(spec->config.max_exits, 1u);
  EXPECT_FALSE(spec->config.allow_taps);
  EXPECT_EQ(spec->merge_config.max_exits, 1u);
  EXPECT_FALSE(spec->merge_config.allow_taps);
}

TEST(BackendSpecTest, GraphCandidatesAreBoundedButTheirMergesAreNot) {
  StyledBackend graph(BackendStyle::kGraph);
  PartitionSpecPtr spec = make_backend_spec(graph, SpecOptions{.graph_max_depth = 3});
  EXPECT_EQ(spec->config.max_depth, 3u);
  EXPECT_EQ(spec->config.max_exits, 1u);
  EXPECT_EQ(spec->merge_config.max_depth, SubGraphConfig::kNoLimit);
  EXPECT_EQ(spec->merge_config.max_exits, SubGraphConfig::kNoLimit);
  EXPECT_TRUE(spec->merge_config.allow_taps);
}

TEST(BackendSpecTest, MaxExitsAboveOneLetsCompilerCandidatesHaveTaps) {
  StyledBackend compiler(BackendStyle::kCompiler);
  PartitionSpecPtr spec = make_backend_spec(compiler, SpecOptions{.max_exits = 3});
  EXPECT_EQ(spec->config.max_exits, 3u);
  EXPECT_TRUE(spec->config.allow_taps);
}

TEST(BackendSpecTest, BoundedMergesKeepTheCandidateLimits) {
  StyledBackend graph(BackendStyle::kGraph);
  PartitionSpecPtr spec =
      make_backend_spec(graph, SpecOptions{.graph_max_depth = 2, .unbounded_merges = false});
  EXPECT_EQ(spec->merge_config.max_depth, 2u);
  EXPECT_EQ(spec->merge_config.max_exits, 1u);
}

}  // namespace
}  // namespace collage
