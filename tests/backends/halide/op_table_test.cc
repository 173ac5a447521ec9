// The op table: every op type has one row, an op without a row is neither
// supported nor lowered, and the description reads the rows.
#include "collage/backends/halide/op_table.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "backends/halide/halide_check.h"
#include "collage/backends/halide/lowering.h"
#include "collage/backends/halide/op_support.h"

namespace collage::halide {
namespace {

using testing::OpGraphBuilder;

TEST(HalideOpTable, EveryOpTypeHasExactlyOneRow) {
  std::map<std::string, int> rows;
  for (const OpRow& row : op_table()) {
    for (const std::string& op : row.op_types) ++rows[op];
  }
  for (const auto& [op, count] : rows) EXPECT_EQ(count, 1) << op;
  for (const std::string& op : supported_ops()) EXPECT_NE(find_op_row(op), nullptr) << op;
}

TEST(HalideOpTable, AnOpWithoutARowIsNeitherSupportedNorLowered) {
  // A reduction the backend does not lower, though its kin have a row.
  OpGraphBuilder b(13);
  const ValueId x = b.input({2, 3, 4});
  const Graph graph = b.finish(b.node("ReduceProd", {x}, {1, 1, 1}));
  EXPECT_EQ(find_op_row("ReduceProd"), nullptr);
  EXPECT_FALSE(supports_node(graph, graph.nodes()[0]));
  const Result<Lowered> lowered = lower(graph);
  ASSERT_FALSE(lowered.ok());
  EXPECT_NE(lowered.error().find("Halide cannot run ReduceProd"), std::string::npos)
      << lowered.error();
}

TEST(HalideOpTable, TheDescriptionListsEveryOpInNameOrderWithItsConditions) {
  const std::string described = describe_ops();
  std::size_t at = 0;
  for (const std::string& op : supported_ops()) {
    const std::size_t found = described.find(op, at);
    ASSERT_NE(found, std::string::npos) << op << " in " << described;
    at = found + op.size();
  }
  EXPECT_NE(described.find("Conv (2-D, constant weights"), std::string::npos) << described;
  EXPECT_NE(described.find("Relu, "), std::string::npos) << described;
}

}  // namespace
}  // namespace collage::halide
