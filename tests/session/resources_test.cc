#include "collage/session/resources.h"

#include <gtest/gtest.h>

#include "collage/ir/error.h"

namespace collage {
namespace {

TEST(ResourcesTest, ThreadsRangeFromOneToFourPerCore) {
  EXPECT_GE(default_threads(), 1);
  EXPECT_EQ(max_threads(), 4 * default_threads());
  EXPECT_EQ(checked_threads(1), 1);
  EXPECT_EQ(checked_threads(max_threads()), max_threads());
  EXPECT_THROW(checked_threads(0), Error);
  EXPECT_THROW(checked_threads(max_threads() + 1), Error);
}

TEST(ResourcesTest, AModelOverTheMemoryBoundIsRefusedNamingTheFlag) {
  Graph graph;
  ValueId x = graph.add_input("x", TensorType{DType::kFloat32, {1024, 1024}});
  graph.add_output(x);
  EXPECT_NO_THROW(check_max_memory(graph, ""));
  EXPECT_NO_THROW(check_max_memory(graph, "1G"));
  try {
    check_max_memory(graph, "1K");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where().field, "--max-memory");
  }
}

}  // namespace
}  // namespace collage
