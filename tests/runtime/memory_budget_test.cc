#include "collage/runtime/memory_budget.h"

#include <gtest/gtest.h>

#include "collage/ir/error.h"

namespace collage {
namespace {

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

// x: f32[1024, 1024] -> Tile -> y: f32[1024, 1024 * 1024] (4 GiB).
Graph tiled_graph() {
  Graph g;
  ValueId x = g.add_input("x", f32({1024, 1024}));
  ValueId repeats = g.add_constant("repeats", Tensor::from_vector<std::int64_t>({1, 1024}, {2}));
  ValueId y = g.add_value("y", f32({1024, 1024 * 1024}));
  g.add_node("Tile", {x, repeats}, {y});
  g.add_output(y);
  return g;
}

TEST(MemoryBudgetTest, TheEstimateSumsEveryValueAndListsTheLargestFirst) {
  Graph g = tiled_graph();
  MemoryEstimate estimate = estimate_memory(g);
  EXPECT_EQ(estimate.total_bytes, (std::int64_t{4} << 30) + (std::int64_t{4} << 20) + 16);
  ASSERT_EQ(estimate.by_size.size(), 3u);
  EXPECT_EQ(g.value(estimate.by_size[0]).name, "y");
  EXPECT_EQ(g.value(estimate.by_size[1]).name, "x");
}

TEST(MemoryBudgetTest, AGraphOverTheBudgetIsAnErrorNamingTheLargestTensor) {
  try {
    check_memory_budget(tiled_graph(), std::int64_t{1} << 30, "--max-memory");
    FAIL() << "no error";
  } catch (const Error& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("--max-memory"), std::string::npos) << message;
    EXPECT_NE(message.find("'y' f32[1024,1048576] (4.0 GiB)"), std::string::npos) << message;
    EXPECT_NE(message.find("1.0 GiB"), std::string::npos) << message;
  }
  EXPECT_NO_THROW(check_memory_budget(tiled_graph(), std::int64_t{8} << 30, "--max-memory"));
}

TEST(MemoryBudgetTest, TheDefaultBudgetIsBelowPhysicalMemory) {
  ASSERT_GT(physical_memory_bytes(), 0);
  EXPECT_LT(default_memory_budget(), physical_memory_bytes());
  EXPECT_GT(default_memory_budget(), physical_memory_bytes() / 2);
}

TEST(MemoryBudgetTest, ByteCountsReadBinaryUnits) {
  EXPECT_EQ(parse_byte_count("4096", "--max-memory"), 4096);
  EXPECT_EQ(parse_byte_count("512M", "--max-memory"), std::int64_t{512} << 20);
  EXPECT_EQ(parse_byte_count("8GiB", "--max-memory"), std::int64_t{8} << 30);
  EXPECT_EQ(parse_byte_count("2k", "--max-memory"), 2048);
  for (const char* bad : {"", "G", "-1", "0", "1.5G", "8X", "99999999T", "1e9"}) {
    EXPECT_THROW(parse_byte_count(bad, "--max-memory"), Error) << bad;
  }
}

}  // namespace
}  // namespace collage
