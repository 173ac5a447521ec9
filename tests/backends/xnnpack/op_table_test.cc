// The XNNPACK op table: the one list that support, layout planning, emission
// and the `collage backends` description read.
#include "collage/backends/xnnpack/op_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "backends/xnnpack/reference_check.h"

namespace collage::xnnpack {
namespace {

using collage::testing::GraphMaker;

std::vector<std::string> table_op_types() {
  std::vector<std::string> types;
  for (const OpRow& row : op_table()) {
    for (std::string_view type : row.op_types) types.emplace_back(type);
  }
  return types;
}

TEST(XnnpackOpTableTest, EveryOpTypeIsInExactlyOneRowAndFindsIt) {
  const std::vector<std::string> types = table_op_types();
  EXPECT_EQ(std::set<std::string>(types.begin(), types.end()).size(), types.size());
  for (const OpRow& row : op_table()) {
    for (std::string_view type : row.op_types) EXPECT_EQ(find_op_row(type), &row) << type;
  }
}

TEST(XnnpackOpTableTest, OpsWithoutARowAreNotSupported) {
  EXPECT_EQ(find_op_row("Transpose"), nullptr);
  GraphMaker g;
  ValueId x = g.input({2, 3});
  ValueId y = g.node("Transpose", {x}, {3, 2});
  Graph graph = g.finish(y);
  EXPECT_FALSE(supports_node(graph, graph.nodes()[0]));
}

TEST(XnnpackOpTableTest, DescriptionListsEveryOpTypeInNameOrder) {
  std::vector<std::string> types = table_op_types();
  std::sort(types.begin(), types.end());
  const std::string described = describe_ops();
  std::size_t from = 0;
  for (const std::string& type : types) {
    const std::size_t at = described.find(type, from);
    ASSERT_NE(at, std::string::npos) << type << " missing or out of order in: " << described;
    from = at + type.size();
  }
  EXPECT_NE(described.find("Conv (2-D, constant weights; "), std::string::npos) << described;
}

}  // namespace
}  // namespace collage::xnnpack
