// fuse_matmul_add: a rank-2 MatMul whose product only an Add of a constant
// bias reads becomes one Gemm writing the Add's output.
#include "collage/ir/passes/fuse_matmul_add.h"

#include <gtest/gtest.h>

#include "ir/passes/passes_test_util.h"

namespace collage {
namespace {

using testing::f32;
using testing::node_writing;

// x[4,8] MatMul w[8,5] -> p[4,5]; y = bias + p.
struct MatMulAdd {
  Graph g;
  ValueId x = g.add_input("x", f32({4, 8}));
  ValueId w = g.add_constant("w", Tensor::zeros(f32({8, 5})));
  ValueId p = g.add_value("p", f32({4, 5}));
  ValueId y = g.add_value("y", f32({4, 5}));

  explicit MatMulAdd(ValueId (*make_bias)(Graph&)) {
    g.add_node("MatMul", {x, w}, {p});
    g.add_node("Add", {make_bias(g), p}, {y});
    g.add_output(y);
  }
};

ValueId constant_bias(Graph& g) { return g.add_constant("bias", Tensor::zeros(f32({5}))); }
ValueId input_bias(Graph& g) { return g.add_input("bias", f32({5})); }

TEST(FuseMatMulAddTest, TheAddBecomesAGemmOfTheMatMulsInputsAndTheBias) {
  MatMulAdd m(constant_bias);
  EXPECT_EQ(fuse_matmul_add(m.g), 1);
  ASSERT_EQ(m.g.num_nodes(), 1u);
  const Node& gemm = node_writing(m.g, "y");
  EXPECT_EQ(gemm.op_type, "Gemm");
  EXPECT_TRUE(gemm.attributes.empty());
  ASSERT_EQ(gemm.inputs.size(), 3u);
  EXPECT_EQ(m.g.value(gemm.inputs[0]).name, "x");
  EXPECT_EQ(m.g.value(gemm.inputs[1]).name, "w");
  EXPECT_EQ(m.g.value(gemm.inputs[2]).name, "bias");
}

TEST(FuseMatMulAddTest, AProductThatIsAlsoAGraphOutputStays) {
  MatMulAdd m(constant_bias);
  m.g.add_output(m.p);
  EXPECT_EQ(fuse_matmul_add(m.g), 0);
  EXPECT_EQ(m.g.num_nodes(), 2u);
}

TEST(FuseMatMulAddTest, ABiasThatIsNotAConstantStays) {
  MatMulAdd m(input_bias);
  EXPECT_EQ(fuse_matmul_add(m.g), 0);
  EXPECT_EQ(node_writing(m.g, "y").op_type, "Add");
}

}  // namespace
}  // namespace collage
