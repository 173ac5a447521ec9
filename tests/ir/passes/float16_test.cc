// compute_float16_in_float32: a float16 graph computes in float32 between
// Casts at its interface, which keeps the model's float16 types.
#include "collage/ir/passes/float16.h"

#include <gtest/gtest.h>
#include <immintrin.h>

#include <cstdint>
#include <vector>

#include "ir/passes/passes_test_util.h"

namespace collage {
namespace {

using testing::f32;

TensorType f16(Shape shape) { return TensorType{DType::kFloat16, std::move(shape)}; }

Tensor half_tensor(const std::vector<float>& values) {
  Tensor t = Tensor::allocate(f16({static_cast<std::int64_t>(values.size())}));
  auto* bits = static_cast<std::uint16_t*>(t.raw());
  for (std::size_t i = 0; i < values.size(); ++i)
    bits[i] = _cvtss_sh(values[i], _MM_FROUND_TO_NEAREST_INT);
  return t;
}

TEST(Float16Test, AFloat32GraphIsLeftAlone) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  ValueId y = g.add_value("y", f32({2}));
  g.add_node("Relu", {x}, {y});
  g.add_output(y);
  EXPECT_EQ(compute_float16_in_float32(g), 0);
  EXPECT_EQ(g.num_nodes(), 1u);
}

TEST(Float16Test, TheInterfaceKeepsFloat16AndEverythingBetweenIsFloat32) {
  Graph g;
  ValueId x = g.add_input("x", f16({2}));
  ValueId w = g.add_constant("w", half_tensor({0.5f, -2.0f}));
  ValueId a = g.add_value("a", f16({2}));
  ValueId y = g.add_value("y", f16({2}));
  g.add_node("Mul", {x, w}, {a});
  g.add_node("Relu", {a}, {y});
  g.add_output(y);
  EXPECT_GT(compute_float16_in_float32(g), 0);

  // x -> Cast -> Mul(w) -> Relu -> Cast -> y
  ASSERT_EQ(g.num_nodes(), 4u);
  EXPECT_EQ(g.node(0).op_type, "Cast");
  EXPECT_EQ(g.node(0).inputs[0], x);
  EXPECT_EQ(g.node(0).attributes.get_int("to"), 1);
  EXPECT_EQ(g.node(1).op_type, "Mul");
  EXPECT_EQ(g.node(1).inputs[0], g.node(0).outputs[0]);
  EXPECT_EQ(g.node(2).op_type, "Relu");
  EXPECT_EQ(g.node(3).op_type, "Cast");
  EXPECT_EQ(g.node(3).attributes.get_int("to"), 10);
  EXPECT_EQ(g.node(3).outputs[0], y);
  EXPECT_EQ(g.node(3).inputs[0], g.node(2).outputs[0]);

  EXPECT_EQ(g.type(x), f16({2}));
  EXPECT_EQ(g.type(y), f16({2}));
  EXPECT_EQ(g.outputs(), std::vector<ValueId>{y});
  EXPECT_EQ(g.value(y).producer, 3);
  EXPECT_EQ(g.type(a), f32({2}));
  EXPECT_EQ(g.type(g.node(2).outputs[0]), f32({2}));
  const Value& weights = g.value(w);
  ASSERT_TRUE(weights.is_constant());
  EXPECT_EQ(weights.constant->dtype(), DType::kFloat32);
  EXPECT_EQ(weights.constant->data<float>()[0], 0.5f);
  EXPECT_EQ(weights.constant->data<float>()[1], -2.0f);
}

TEST(Float16Test, CastsAndConstantsThatMakeFloat16MakeFloat32) {
  Graph g;
  ValueId x = g.add_input("x", f32({2}));
  ValueId h = g.add_value("h", f16({2}));
  ValueId c = g.add_value("c", f16({2}));
  ValueId s = g.add_value("s", f16({2}));
  ValueId y = g.add_value("y", f32({2}));
  Attributes to_half;
  to_half.set("to", std::int64_t{10});
  g.add_node("Cast", {x}, {h}, to_half);
  Attributes value;
  value.set("value", half_tensor({1.5f, 3.0f}));
  g.add_node("Constant", {}, {c}, value);
  g.add_node("Add", {h, c}, {s});
  Attributes to_float;
  to_float.set("to", std::int64_t{1});
  g.add_node("Cast", {s}, {y}, to_float);
  g.add_output(y);
  EXPECT_GT(compute_float16_in_float32(g), 0);
  ASSERT_EQ(g.num_nodes(), 4u);
  for (const Node& node : g.nodes()) {
    if (node.op_type == "Cast") {
      EXPECT_EQ(node.attributes.get_int("to"), 1) << node.name;
    }
    if (node.op_type == "Constant") {
      const Tensor& t = node.attributes.get_tensor("value");
      ASSERT_EQ(t.dtype(), DType::kFloat32);
      EXPECT_EQ(t.data<float>()[1], 3.0f);
    }
  }
  EXPECT_EQ(g.type(h), f32({2}));
  EXPECT_EQ(g.type(s), f32({2}));
}

}  // namespace
}  // namespace collage
