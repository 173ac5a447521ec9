// Channels-last edges: a partition whose inputs or outputs the caller stores
// in NHWC order computes what the plain partition computes, whichever
// layout XNNPACK keeps the value in inside.
#include <gtest/gtest.h>

#include "backends/xnnpack/reference_check.h"

namespace collage::testing {
namespace {

// Runs `graph` with every input and output channels-last and compares it,
// converted back, with the reference run on plain tensors.
void expect_channels_last_edges_match(const Graph& graph, int threads) {
  expect_edge_layouts_match_reference(xnnpack_backend(), graph, EdgeLayout::kChannelsLast,
                                      EdgeLayout::kChannelsLast, threads);
}

TEST(XnnpackEdgeLayoutTest, ItsLayoutConversionStoresTensorsChannelsLast) {
  // Large enough to be split over the pool, and small.
  for (const Shape& shape : {Shape{1, 24, 60, 50}, Shape{2, 5, 3, 7}}) {
    const TensorType type{DType::kFloat32, shape};
    const Tensor plain = random_tensor(shape, 3);
    const Tensor expected = convert_edge_layout(plain, EdgeLayout::kChannelsLast, false);
    Tensor stored = Tensor::allocate(type);
    Tensor back = Tensor::allocate(type);
    auto into = xnnpack_backend().layout_conversion(type, EdgeLayout::kChannelsLast, false, 2);
    auto out_of = xnnpack_backend().layout_conversion(type, EdgeLayout::kChannelsLast, true, 2);
    ASSERT_TRUE(into);
    ASSERT_TRUE(out_of);
    into->run(plain.data<float>(), stored.data<float>());
    out_of->run(stored.data<float>(), back.data<float>());
    for (std::int64_t i = 0; i < type.numel(); ++i) {
      ASSERT_EQ(stored.data<float>()[i], expected.data<float>()[i]) << type.to_string() << " " << i;
      ASSERT_EQ(back.data<float>()[i], plain.data<float>()[i]) << type.to_string() << " " << i;
    }
  }
  // XNNPACK takes no blocked edges.
  const TensorType type{DType::kFloat32, {1, 16, 4, 4}};
  EXPECT_FALSE(xnnpack_backend().layout_conversion(type, EdgeLayout::kBlocked16, false, 1));
}

TEST(XnnpackEdgeLayoutTest, ConvolutionTakesAndGivesNhwcWithoutConverting) {
  GraphMaker g;
  ValueId x = g.input({1, 8, 9, 7});
  ValueId conv = g.node("Conv", {x, g.weights({6, 8, 3, 3}), g.weights({6})}, {1, 6, 9, 7},
                        attrs({{"pads", Ints{1, 1, 1, 1}}}));
  expect_channels_last_edges_match(g.finish(g.node("Relu", {conv}, {1, 6, 9, 7})), 2);
}

TEST(XnnpackEdgeLayoutTest, ElementwiseOnlyPartitionFollowsItsNhwcEdges) {
  // An elementwise-only region may compute in either layout; XNNPACK keeps
  // it channels-last, as its edges are, and converts nothing.
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

TEST(XnnpackEdgeLayoutTest, ABlockedLayoutIsAFailure) {
  GraphMaker g;
  ValueId x = g.input({1, 16, 4, 4});
  Graph graph = g.finish(g.node("Relu", {x}, {1, 16, 4, 4}));
  EXPECT_FALSE(xnnpack_backend().accepts_edge_layout(EdgeLayout::kBlocked16));
  CompileOptions options{1};
  options.input_layouts = {EdgeLayout::kBlocked16};
  auto kernel = xnnpack_backend().compile(graph, options);
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().find("blocked-16"), std::string::npos) << kernel.error();
}

}  // namespace
}  // namespace collage::testing
