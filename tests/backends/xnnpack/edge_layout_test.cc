// Channels-last edges: a partition whose inputs or outputs the caller stores
// in NHWC order computes what the plain partition computes, whichever
// layout XNNPACK keeps the value in inside.
#include <gtest/gtest.h>

#include "backends/xnnpack/reference_check.h"
#include "collage/backends/xnnpack/channels_last.h"

namespace collage::testing {
namespace {

Tensor to_nhwc(const Tensor& nchw) {
  const Shape& s = nchw.shape();
  Tensor out = Tensor::allocate(nchw.type());
  xnnpack::nchw_to_nhwc(nchw.data<float>(), out.data<float>(), s[0], s[1], s[2] * s[3], nullptr);
  return out;
}

Tensor to_nchw(const Tensor& nhwc) {
  const Shape& s = nhwc.shape();
  Tensor out = Tensor::allocate(nhwc.type());
  xnnpack::nhwc_to_nchw(nhwc.data<float>(), out.data<float>(), s[0], s[1], s[2] * s[3], nullptr);
  return out;
}

// Runs `graph` with every input and output channels-last and compares it,
// converted back, with the reference run on plain tensors.
void expect_channels_last_edges_match(const Graph& graph, int threads) {
  CompileOptions options{threads};
  options.input_layouts.assign(graph.inputs().size(), EdgeLayout::kChannelsLast);
  options.output_layouts.assign(graph.outputs().size(), EdgeLayout::kChannelsLast);
  auto kernel = xnnpack_backend().compile(graph, options);
  ASSERT_TRUE(kernel.ok()) << kernel.error();
  std::vector<Tensor> inputs = random_inputs(graph, 5, -1.0f, 1.0f);
  std::vector<Tensor> nhwc_inputs;
  for (const Tensor& input : inputs) nhwc_inputs.push_back(to_nhwc(input));
  std::vector<Tensor> actual = allocate_outputs(graph);
  std::vector<Tensor> expected = allocate_outputs(graph);
  for (int run = 0; run < 2; ++run) (*kernel)->run(nhwc_inputs, actual);
  compile_reference(graph, 1)->run(inputs, expected);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_LE(relative_error(to_nchw(actual[i]), expected[i]), 1e-4) << "output " << i;
  }
}

TEST(XnnpackEdgeLayoutTest, ConvolutionTakesAndGivesNhwcWithoutConverting) {
  GraphMaker g;
  ValueId x = g.input({1, 8, 9, 7});
  ValueId conv = g.node("Conv", {x, g.weights({6, 8, 3, 3}), g.weights({6})}, {1, 6, 9, 7},
                        attrs({{"pads", Ints{1, 1, 1, 1}}}));
  expect_channels_last_edges_match(g.finish(g.node("Relu", {conv}, {1, 6, 9, 7})), 2);
}

TEST(XnnpackEdgeLayoutTest, ElementwiseOnlyPartitionConvertsInsideAndOut) {
  // XNNPACK keeps an elementwise-only region plain; the NHWC edges are then
  // converted inside the kernel.
  GraphMaker g;
  ValueId a = g.input({2, 3, 4, 5});
  ValueId b = g.input({2, 3, 4, 5});
  ValueId sum = g.node("Add", {a, b}, {2, 3, 4, 5});
  expect_channels_last_edges_match(g.finish(g.node("Sigmoid", {sum}, {2, 3, 4, 5})), 1);
}

TEST(XnnpackEdgeLayoutTest, ALayoutForAnEdgeThatIsNot4DIsAFailure) {
  GraphMaker g;
  ValueId x = g.input({4, 16});
  Graph graph = g.finish(g.node("Relu", {x}, {4, 16}));
  CompileOptions options{1};
  options.input_layouts = {EdgeLayout::kChannelsLast};
  auto kernel = xnnpack_backend().compile(graph, options);
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().find("4-D"), std::string::npos) << kernel.error();
}

}  // namespace
}  // namespace collage::testing
