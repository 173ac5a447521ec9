// Einsum, lowered at import (lower_einsum.h): what the lowered graph
// computes is checked against a direct sum over every assignment of the
// indices, written here from the definition.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "collage/ir/error.h"
#include "onnx/model_builder.h"
#include "onnx/reference_run.h"

namespace collage {
namespace {

using testing::attr;
using testing::Dim;
using testing::floats;
using testing::import_with_native;
using testing::ModelBuilder;
using testing::run_reference;

// Small values without a pattern a wrong index order could hide behind.
Tensor values(Shape shape, int seed) {
  Tensor tensor = Tensor::allocate(TensorType{DType::kFloat32, std::move(shape)});
  for (std::int64_t i = 0; i < tensor.numel(); ++i) {
    tensor.data<float>()[i] = static_cast<float>((i * 7 + seed * 13) % 11) / 4.0f - 1.0f;
  }
  return tensor;
}

// sum over every assignment of the indices of the product of the operands,
// each indexed by its letters (a dimension of size 1 broadcasts); the
// result indexed by `output`.
std::vector<float> direct_einsum(const std::vector<std::string>& terms,
                                 const std::vector<Tensor>& operands, const std::string& output) {
  std::map<char, std::int64_t> sizes;
  for (std::size_t k = 0; k < terms.size(); ++k) {
    for (std::size_t d = 0; d < terms[k].size(); ++d) {
      std::int64_t& size = sizes[terms[k][d]];
      size = std::max(size, operands[k].shape()[d]);
    }
  }
  std::vector<char> letters;
  for (const auto& [letter, size] : sizes) letters.push_back(letter);
  std::int64_t out_count = 1;
  for (char c : output) out_count *= sizes[c];
  std::vector<float> out(static_cast<std::size_t>(out_count), 0.0f);
  std::map<char, std::int64_t> at;
  for (char c : letters) at[c] = 0;
  while (true) {
    double product = 1.0;
    for (std::size_t k = 0; k < terms.size(); ++k) {
      std::int64_t offset = 0;
      for (std::size_t d = 0; d < terms[k].size(); ++d) {
        const std::int64_t dim = operands[k].shape()[d];
        offset = offset * dim + (dim == 1 ? 0 : at[terms[k][d]]);
      }
      product *= operands[k].data<float>()[offset];
    }
    std::int64_t out_offset = 0;
    for (char c : output) out_offset = out_offset * sizes[c] + at[c];
    out[static_cast<std::size_t>(out_offset)] += static_cast<float>(product);
    std::size_t i = letters.size();
    while (i > 0 && ++at[letters[i - 1]] == sizes[letters[i - 1]]) at[letters[--i]] = 0;
    if (i == 0) break;
  }
  return out;
}

Graph import_einsum(const std::string& equation, const std::vector<Shape>& shapes,
                    std::int64_t opset = 13) {
  ModelBuilder m(opset);
  std::vector<std::string> names;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    names.push_back("x" + std::to_string(k));
    std::vector<Dim> dims(shapes[k].begin(), shapes[k].end());
    m.input(names.back(), dims);
  }
  m.node("Einsum", names, {"y"}, {attr("equation", equation)}).output("y");
  return import_with_native(m);
}

struct Case {
  std::string equation;
  std::vector<Shape> shapes;
  // The same sum in plain letters, for direct_einsum.
  std::vector<std::string> terms;
  std::string output;
  Shape output_shape;
  std::int64_t opset = 13;
};

void expect_lowered_and_right(const Case& c) {
  SCOPED_TRACE(c.equation);
  Graph g = import_einsum(c.equation, c.shapes, c.opset);
  for (const Node& node : g.nodes()) EXPECT_NE(node.op_type, "Einsum");
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_EQ(g.type(g.outputs()[0]).shape, c.output_shape);
  std::vector<Tensor> inputs;
  for (std::size_t k = 0; k < c.shapes.size(); ++k) {
    inputs.push_back(values(c.shapes[k], static_cast<int>(k)));
  }
  const std::vector<float> got = floats(run_reference(g, inputs)[0]);
  const std::vector<float> want = direct_einsum(c.terms, inputs, c.output);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-4 * (1.0 + std::fabs(want[i]))) << "element " << i;
  }
}

TEST(EinsumTest, AttentionWithSpacesAndCapitalsIsATransposeAndAMatMul) {
  // MaxViT's attention scores, as torchvision exports them.
  const Case c{"B G H I D, B G H J D -> B G H I J",
               {{1, 2, 3, 4, 5}, {1, 2, 3, 6, 5}},
               {"BGHID", "BGHJD"},
               "BGHIJ",
               {1, 2, 3, 4, 6}};
  expect_lowered_and_right(c);
  Graph g = import_einsum(c.equation, c.shapes);
  std::map<std::string, int> ops = op_histogram(g);
  EXPECT_EQ(ops["MatMul"], 1);
  EXPECT_EQ(ops["Transpose"], 1);
  EXPECT_EQ(ops.count("Reshape"), 0u);
}

TEST(EinsumTest, OneOperandTransposesAndSums) {
  expect_lowered_and_right({"ij->ji", {{3, 4}}, {"ij"}, "ji", {4, 3}});
  expect_lowered_and_right({"ij->i", {{3, 4}}, {"ij"}, "i", {3}});
  expect_lowered_and_right({"ijk->", {{2, 3, 4}}, {"ijk"}, "", {}});
  // Before opset 13 ReduceSum takes its axes as an attribute.
  expect_lowered_and_right({"ijk->j", {{2, 3, 4}}, {"ijk"}, "j", {3}, 12});
  // Nothing to do: still a node writing the output.
  expect_lowered_and_right({"ij->ij", {{3, 4}}, {"ij"}, "ij", {3, 4}});
}

TEST(EinsumTest, TheImplicitOutputIsTheLettersUsedOnceInOrder) {
  expect_lowered_and_right({"i,i", {{5}, {5}}, {"i", "i"}, "", {}});
  expect_lowered_and_right({"ik,kj", {{3, 4}, {4, 2}}, {"ik", "kj"}, "ij", {3, 2}});
  expect_lowered_and_right({"ba", {{3, 4}}, {"ba"}, "ab", {4, 3}});
}

TEST(EinsumTest, ProductsOuterContractedAndSummedAlone) {
  expect_lowered_and_right({"i,j->ij", {{3}, {4}}, {"i", "j"}, "ij", {3, 4}});
  expect_lowered_and_right(
      {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}, {"bij", "bjk"}, "bik", {2, 3, 5}});
  // k is only in the first operand and not in the output: summed first.
  expect_lowered_and_right({"ijk,jl->il", {{2, 3, 4}, {3, 5}}, {"ijk", "jl"}, "il", {2, 5}});
  // Free indices on both sides, in orders the MatMul does not take.
  expect_lowered_and_right(
      {"kaib,cjk->jbaic", {{4, 2, 3, 2}, {3, 2, 4}}, {"kaib", "cjk"}, "jbaic", {2, 2, 2, 3, 3}});
}

TEST(EinsumTest, ThreeOperandsContractFromTheLeft) {
  expect_lowered_and_right(
      {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}, {"ij", "jk", "kl"}, "il", {2, 5}});
  // j is needed by the third operand, so the first product keeps it.
  expect_lowered_and_right({"ij,ik,jk->i", {{2, 3}, {2, 4}, {3, 4}}, {"ij", "ik", "jk"}, "i", {2}});
}

TEST(EinsumTest, EllipsesAndSizeOneDimensionsBroadcast) {
  expect_lowered_and_right(
      {"...id,...jd->...ij", {{2, 3, 4, 5}, {3, 6, 5}}, {"abid", "bjd"}, "abij", {2, 3, 4, 6}});
  expect_lowered_and_right(
      {"bij,bjk->bik", {{1, 2, 3}, {4, 3, 5}}, {"bij", "bjk"}, "bik", {4, 2, 5}});
  // A contracted index of size 1 on one side.
  expect_lowered_and_right({"ij,jk->ik", {{2, 1}, {3, 4}}, {"ij", "jk"}, "ik", {2, 4}});
  expect_lowered_and_right({"...ij->...ji", {{2, 3, 4}}, {"aij"}, "aji", {2, 4, 3}});
}

void expect_import_error(const std::string& equation, const std::vector<Shape>& shapes,
                         const std::string& words) {
  SCOPED_TRACE(equation);
  try {
    import_einsum(equation, shapes);
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
  }
}

TEST(EinsumTest, WhatIsNotLoweredIsAnErrorNamingTheNode) {
  expect_import_error("ii->i", {{3, 3}}, "(a diagonal), which is not supported");
  expect_import_error("ij,jk->iz", {{2, 3}, {3, 4}}, "'z', which no operand has");
  expect_import_error("ijk,jk->ik", {{2, 3}, {3, 4}}, "names 3 dimensions, but its operand has 2");
  expect_import_error("ij->ii", {{2, 3}}, "the output repeats index 'i'");
  expect_import_error("i2,j", {{2, 3}, {3}}, "neither a letter");
  expect_import_error("ij,jk->ik", {{2, 3}, {4, 5}}, "index 'j' has size 3 in one operand and 4");
  expect_import_error("ij->ij", {{2, 3}, {3}}, "1 operand terms for 2 inputs");
}

}  // namespace
}  // namespace collage
