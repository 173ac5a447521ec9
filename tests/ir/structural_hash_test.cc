#include "collage/ir/structural_hash.h"

#include <gtest/gtest.h>

namespace collage {
namespace {

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

Tensor filled(Shape shape, float value) {
  Tensor tensor = Tensor::allocate(f32(std::move(shape)));
  for (std::int64_t i = 0; i < tensor.numel(); ++i) tensor.data<float>()[i] = value;
  return tensor;
}

// The knobs the tests turn; the defaults describe one fixed graph:
//   y = Relu(Conv(x, w, b) + bias_add)   with a 16-channel 3x3 conv
struct Spec {
  std::string prefix = "";
  Shape input_shape = {1, 3, 8, 8};
  DType input_dtype = DType::kFloat32;
  float weight_value = 0.5f;
  float small_value = 1.0f;
  std::vector<std::int64_t> pads = {1, 1, 1, 1};
  bool swap_add_inputs = false;
  std::int64_t opset = 13;
};

Graph build(const Spec& s) {
  Graph g;
  g.opset = s.opset;
  g.name = s.prefix + "model";
  ValueId x = g.add_input(s.prefix + "x", TensorType{s.input_dtype, s.input_shape});
  ValueId w = g.add_constant(s.prefix + "w", filled({16, 3, 3, 3}, s.weight_value));
  ValueId bias = g.add_constant(s.prefix + "bias", filled({1, 16, 1, 1}, s.small_value));
  ValueId conv = g.add_value(s.prefix + "conv", f32({1, 16, 8, 8}));
  ValueId sum = g.add_value(s.prefix + "sum", f32({1, 16, 8, 8}));
  ValueId y = g.add_value(s.prefix + "y", f32({1, 16, 8, 8}));
  Attributes conv_attributes;
  conv_attributes.set("pads", s.pads);
  conv_attributes.set("kernel_shape", std::vector<std::int64_t>{3, 3});
  g.add_node("Conv", {x, w}, {conv}, conv_attributes, s.prefix + "conv_node");
  if (s.swap_add_inputs) {
    g.add_node("Add", {bias, conv}, {sum}, {}, s.prefix + "add_node");
  } else {
    g.add_node("Add", {conv, bias}, {sum}, {}, s.prefix + "add_node");
  }
  g.add_node("Relu", {sum}, {y}, {}, s.prefix + "relu_node");
  g.add_output(y);
  return g;
}

std::uint64_t hash_of(const Spec& spec) { return structural_hash(build(spec)); }

TEST(StructuralHashTest, IgnoresGraphNodeAndValueNames) {
  EXPECT_EQ(hash_of({}), hash_of({.prefix = "renamed_"}));
}

TEST(StructuralHashTest, IgnoresTheValuesOfWeights) {
  EXPECT_EQ(hash_of({}), hash_of({.weight_value = -3.0f}));
}

TEST(StructuralHashTest, SeesTheValuesOfSmallConstants) {
  EXPECT_NE(hash_of({}), hash_of({.small_value = 2.0f}));
}

TEST(StructuralHashTest, SeesInputShapes) {
  EXPECT_NE(hash_of({}), hash_of({.input_shape = {2, 3, 8, 8}}));
}

TEST(StructuralHashTest, SeesElementTypes) {
  EXPECT_NE(hash_of({}), hash_of({.input_dtype = DType::kFloat16}));
}

TEST(StructuralHashTest, SeesAttributeValues) {
  EXPECT_NE(hash_of({}), hash_of({.pads = {0, 0, 0, 0}}));
}

TEST(StructuralHashTest, SeesTheOrderOfANodesInputs) {
  EXPECT_NE(hash_of({}), hash_of({.swap_add_inputs = true}));
}

TEST(StructuralHashTest, SeesTheOpset) { EXPECT_NE(hash_of({}), hash_of({.opset = 17})); }

TEST(StructuralHashTest, SeesAnAttributeThatIsAddedWithADefaultLikeValue) {
  Graph plain = build({});
  Graph with_group = build({});
  with_group.node(0).attributes.set("group", std::int64_t{1});
  EXPECT_NE(structural_hash(plain), structural_hash(with_group));
}

TEST(StructuralHashTest, SeesTheValuesOfSmallTensorAttributes) {
  auto graph_with_fill = [](float fill) {
    Graph g;
    ValueId shape = g.add_constant("shape", Tensor::from_vector<std::int64_t>({4}, {1}));
    ValueId y = g.add_value("y", f32({4}));
    Attributes attributes;
    attributes.set("value", Tensor::from_vector<float>({fill}, {1}));
    g.add_node("ConstantOfShape", {shape}, {y}, attributes);
    g.add_output(y);
    return g;
  };
  EXPECT_NE(structural_hash(graph_with_fill(0.0f)), structural_hash(graph_with_fill(1.0f)));
}

TEST(StructuralHashTest, SeesTheOrderOfGraphInputs) {
  auto sub = [](bool swap) {
    Graph g;
    ValueId a = g.add_input("a", f32({2}));
    ValueId b = g.add_input("b", f32({2}));
    ValueId y = g.add_value("y", f32({2}));
    g.add_node("Sub", swap ? std::vector<ValueId>{b, a} : std::vector<ValueId>{a, b}, {y});
    g.add_output(y);
    return g;
  };
  EXPECT_NE(structural_hash(sub(false)), structural_hash(sub(true)));
}

TEST(StructuralHashTest, SeesTheOrderOfGraphOutputs) {
  auto two_outputs = [](bool swap) {
    Graph g;
    ValueId x = g.add_input("x", f32({2}));
    ValueId r = g.add_value("r", f32({2}));
    ValueId n = g.add_value("n", f32({2}));
    g.add_node("Relu", {x}, {r});
    g.add_node("Neg", {x}, {n});
    g.add_output(swap ? n : r);
    g.add_output(swap ? r : n);
    return g;
  };
  EXPECT_NE(structural_hash(two_outputs(false)), structural_hash(two_outputs(true)));
}

TEST(StructuralHashTest, TellsASharedValueFromTwoEqualNodes) {
  Graph shared;
  {
    ValueId x = shared.add_input("x", f32({2}));
    ValueId r = shared.add_value("r", f32({2}));
    shared.add_node("Relu", {x}, {r});
    shared.add_output(r);
    shared.add_output(r);
  }
  Graph twice;
  {
    ValueId x = twice.add_input("x", f32({2}));
    ValueId r1 = twice.add_value("r1", f32({2}));
    ValueId r2 = twice.add_value("r2", f32({2}));
    twice.add_node("Relu", {x}, {r1});
    twice.add_node("Relu", {x}, {r2});
    twice.add_output(r1);
    twice.add_output(r2);
  }
  EXPECT_NE(structural_hash(shared), structural_hash(twice));
}

TEST(StructuralHashTest, IgnoresHowIndependentBranchesAreInterleaved) {
  auto branches = [](bool relu_first) {
    Graph g;
    ValueId x = g.add_input("x", f32({2}));
    ValueId r = g.add_value("r", f32({2}));
    ValueId n = g.add_value("n", f32({2}));
    ValueId y = g.add_value("y", f32({2}));
    if (relu_first) {
      g.add_node("Relu", {x}, {r});
      g.add_node("Neg", {x}, {n});
    } else {
      g.add_node("Neg", {x}, {n});
      g.add_node("Relu", {x}, {r});
    }
    g.add_node("Add", {r, n}, {y});
    g.add_output(y);
    return g;
  };
  EXPECT_EQ(structural_hash(branches(true)), structural_hash(branches(false)));
}

// The hash keys a persistent cache: it must not change between runs,
// builds or machines. If this fails after a deliberate change to the
// encoding, every cached measurement is invalidated; update the constant.
TEST(StructuralHashTest, IsAFixedFunctionOfTheGraph) {
  EXPECT_EQ(structural_hash_hex(build({})), "d142704bba287aa3");
}

}  // namespace
}  // namespace collage
