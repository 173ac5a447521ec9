#include "collage/session/model_loading.h"

#include <gtest/gtest.h>

#include "collage/backends/registry.h"
#include "collage/ir/error.h"

namespace collage {
namespace {

TEST(ModelLoadingTest, GraphOptLevelsAreNamedAsTheFlagTakesThem) {
  EXPECT_EQ(graph_opt_level("none"), GraphOptLevel::kNone);
  EXPECT_EQ(graph_opt_level("basic"), GraphOptLevel::kBasic);
  EXPECT_EQ(graph_opt_level("all"), GraphOptLevel::kAll);
  EXPECT_THROW(graph_opt_level("most"), Error);
}

TEST(ModelLoadingTest, UnsupportedOpsAreCountedAndListed) {
  Graph graph;
  ValueId x = graph.add_input("x", TensorType{DType::kFloat32, {4}});
  ValueId y = graph.add_value("y", TensorType{DType::kFloat32, {4}});
  ValueId z = graph.add_value("z", TensorType{DType::kFloat32, {4}});
  graph.add_node("NoSuchOp", {x}, {y});
  graph.add_node("NoSuchOp", {y}, {z});
  graph.add_output(z);
  std::map<std::string, int> missing = unsupported_ops(graph, BackendRegistry::global().native());
  EXPECT_EQ(missing, (std::map<std::string, int>{{"NoSuchOp", 2}}));
  EXPECT_EQ(describe_op_counts({{"A", 1}, {"B", 3}}), "A, B (x3)");
  EXPECT_THROW(require_native_support(graph, "m.onnx"), Error);
}

TEST(ModelLoadingTest, BytesThatAreNotAModelAreAnError) {
  EXPECT_THROW(load_model_bytes("", {}), Error);
  EXPECT_THROW(load_model_bytes("\x01\x02garbage", {}), Error);
  EXPECT_THROW(load_model("/nonexistent/model.onnx", {}), Error);
}

// A planning error on a model whose dynamic dimensions were set to 1 says
// so and names --input-shape; an error about an option, or on a model
// without open dimensions, stays as it was.
TEST(ModelLoadingTest, APlanningErrorOnAnOpenDimensionSaysTheSizeMayBeTheCause) {
  Graph graph;
  ValueId x = graph.add_input("x", TensorType{DType::kFloat32, {1, 3, 1, 1}});
  graph.add_output(x);
  const Error search("no valid cover: every candidate that could cover Conv_3 has an invalid cost",
                     {.node = "Conv_3"});
  EXPECT_EQ(with_open_dims_hint(search, graph).message(), search.message());
  graph.open_dims.push_back(OpenDim{"x", 2, "height"});
  const Error hinted = with_open_dims_hint(search, graph);
  EXPECT_EQ(hinted.message().rfind(search.message(), 0), 0u);
  EXPECT_NE(hinted.message().find("dynamic input dimensions were set to 1"), std::string::npos);
  EXPECT_NE(hinted.message().find("--input-shape"), std::string::npos);
  EXPECT_EQ(hinted.where().node, "Conv_3");
  const Error option("must be at least 1", {.field = "--repeat"});
  EXPECT_EQ(with_open_dims_hint(option, graph).message(), option.message());
}

}  // namespace
}  // namespace collage
