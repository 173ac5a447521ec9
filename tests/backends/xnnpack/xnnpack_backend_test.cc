// The XNNPACK backend as a whole: identity, multi-op partitions compiled into
// one runtime, fusions, partitions it must refuse, and the kernel contract.
#include "collage/backends/xnnpack/xnnpack_backend.h"

#include <gtest/gtest.h>
#include <omp.h>
#include <pthreadpool.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "backends/xnnpack/reference_check.h"
#include "collage/backends/xnnpack/openmp_pthreadpool.h"
#include "collage/ir/error.h"

namespace collage::testing {
namespace {

TEST(XnnpackBackendTest, IsAGraphBackendWithThePackageVersion) {
  const Backend& backend = xnnpack_backend();
  EXPECT_EQ(backend.name(), "xnnpack");
  EXPECT_EQ(backend.style(), BackendStyle::kGraph);
  EXPECT_EQ(backend.version().rfind("XNNPACK ", 0), 0u);
  EXPECT_NE(backend.version(), "XNNPACK unknown");
  EXPECT_NE(backend.describe_support().find("Conv"), std::string::npos);
}

// conv -> relu -> conv -> add (residual) -> global pool -> flatten -> gemm
Graph residual_block(std::int64_t opset = 13) {
  GraphMaker g(opset);
  ValueId x = g.input({2, 8, 10, 10});
  ValueId c1 = g.node("Conv", {x, g.weights({8, 8, 3, 3}, -0.3f, 0.3f), g.weights({8})},
                      {2, 8, 10, 10}, attrs({{"pads", Ints{1, 1, 1, 1}}}));
  ValueId r1 = g.node("Relu", {c1}, {2, 8, 10, 10});
  ValueId c2 = g.node("Conv", {r1, g.weights({8, 8, 3, 3}, -0.3f, 0.3f), g.weights({8})},
                      {2, 8, 10, 10}, attrs({{"pads", Ints{1, 1, 1, 1}}}));
  ValueId sum = g.node("Add", {c2, x}, {2, 8, 10, 10});
  ValueId pooled = g.node("GlobalAveragePool", {sum}, {2, 8, 1, 1});
  ValueId flat = g.node("Flatten", {pooled}, {2, 8});
  return g.finish(g.node("Gemm", {flat, g.weights({5, 8}), g.weights({5})}, {2, 5},
                         attrs({{"transB", std::int64_t{1}}})));
}

TEST(XnnpackBackendTest, ResidualBlockWithPoolingAndGemmMatchesReference) {
  expect_matches_reference(residual_block());
}

TEST(XnnpackBackendTest, ResidualBlockMatchesReferenceOnTwoThreads) {
  expect_matches_reference(residual_block(), 2);
}

TEST(XnnpackBackendTest, InputsAreReadInPlaceOnlyFromBuffersWithRoomPastTheirEnd) {
  // The executor's buffers (allocate) are read in place; a caller's exactly
  // sized buffer (borrow) is staged, since XNNPACK reads past an input's end.
  const Graph graph = residual_block();
  auto kernel = xnnpack_backend().compile(graph, CompileOptions{1});
  ASSERT_TRUE(kernel.ok()) << kernel.error();
  const std::vector<Tensor> allocated = random_inputs(graph, 21);
  ASSERT_TRUE(allocated[0].readable_past_end());
  auto exact = std::make_shared<std::vector<float>>(
      allocated[0].data<float>(), allocated[0].data<float>() + allocated[0].numel());
  const std::vector<Tensor> borrowed = {Tensor::borrow(allocated[0].type(), exact, exact->data())};
  ASSERT_FALSE(borrowed[0].readable_past_end());
  std::vector<Tensor> from_allocated = allocate_outputs(graph);
  std::vector<Tensor> from_borrowed = allocate_outputs(graph);
  // Alternating, so the runtime is set up again for each kind of buffer.
  for (int round = 0; round < 2; ++round) {
    (*kernel)->run(allocated, from_allocated);
    (*kernel)->run(borrowed, from_borrowed);
  }
  const std::vector<Tensor> expected = run_reference(graph, allocated);
  EXPECT_LE(relative_error(from_allocated[0], expected[0]), 1e-4);
  EXPECT_LE(relative_error(from_borrowed[0], expected[0]), 1e-4);
}

TEST(XnnpackBackendTest, RuntimesRunTheirParallelWorkOnTheSharedOpenMpThreads) {
  // A plain-layout partition: no edge transposes of ours, only XNNPACK's own
  // operators call the pool.
  GraphMaker g;
  ValueId x = g.input({64, 64});
  ValueId product = g.node("MatMul", {x, g.weights({64, 64})}, {64, 64});
  Graph graph = g.finish(g.node("Relu", {product}, {64, 64}));
  const std::uint64_t before = xnnpack::openmp_pool_parallel_calls();
  expect_matches_reference(graph, 2);
  EXPECT_GT(xnnpack::openmp_pool_parallel_calls(), before);
}

TEST(XnnpackBackendTest, PthreadpoolCallsBindToTheOpenMpImplementation) {
  // Whatever libXNNPACK would reach through the pthreadpool API must be the
  // OpenMP-backed pool: each task records the OpenMP thread running it.
  const std::uint64_t before = xnnpack::openmp_pool_parallel_calls();
  pthreadpool_t pool = pthreadpool_create(2);
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pthreadpool_get_threads_count(pool), 2u);
  struct Seen {
    std::mutex mutex;
    std::set<int> omp_threads;
    std::size_t items = 0;
  } seen;
  pthreadpool_parallelize_2d_tile_2d(
      pool,
      [](void* context, std::size_t, std::size_t, std::size_t tile_i, std::size_t tile_j) {
        auto* s = static_cast<Seen*>(context);
        std::lock_guard<std::mutex> lock(s->mutex);
        s->omp_threads.insert(omp_get_thread_num());
        s->items += tile_i * tile_j;
      },
      &seen, 7, 9, 2, 4, 0);
  pthreadpool_destroy(pool);
  EXPECT_EQ(seen.items, 7u * 9u);
  // Only the OpenMP implementation counts its calls (which threads ran the
  // items is the pool's to balance).
  EXPECT_GT(xnnpack::openmp_pool_parallel_calls(), before);
  for (int thread : seen.omp_threads) EXPECT_TRUE(thread == 0 || thread == 1) << thread;
}

TEST(XnnpackBackendTest, AThreadThatFinishesItsShareTakesItemsLeftInAnother) {
  // The first half's items are slow: the thread owning the second half
  // finishes early and takes some of the first half from its end. Every
  // item runs once.
  pthreadpool_t pool = pthreadpool_create(2);
  ASSERT_NE(pool, nullptr);
  struct Runs {
    std::mutex mutex;
    std::vector<int> count = std::vector<int>(8, 0);
    std::vector<int> thread = std::vector<int>(8, -1);
  } runs;
  pthreadpool_parallelize_1d(
      pool,
      [](void* context, std::size_t i) {
        if (i < 4) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        auto* r = static_cast<Runs*>(context);
        std::lock_guard<std::mutex> lock(r->mutex);
        ++r->count[i];
        r->thread[i] = omp_get_thread_num();
      },
      &runs, 8, 0);
  pthreadpool_destroy(pool);
  EXPECT_EQ(runs.count, std::vector<int>(8, 1));
  const int owner = runs.thread[0];
  EXPECT_TRUE(std::any_of(runs.thread.begin() + 1, runs.thread.begin() + 4,
                          [owner](int thread) { return thread != owner; }));
}

TEST(XnnpackBackendTest, EveryOutputOfAPartitionComesBackInNchwOrder) {
  GraphMaker g;
  ValueId x = g.input({1, 3, 6, 7});
  ValueId c1 = g.node("Conv", {x, g.weights({4, 3, 3, 3})}, {1, 4, 4, 5});
  ValueId r1 = g.node("Relu", {c1}, {1, 4, 4, 5});
  ValueId c2 = g.node("Conv", {r1, g.weights({2, 4, 1, 1})}, {1, 2, 4, 5});
  g.output(r1);
  g.output(c2);
  expect_matches_reference(g.finish(c2));
}

TEST(XnnpackBackendTest, BatchNormalizationAfterConvIsFoldedAndMatchesReference) {
  GraphMaker g;
  ValueId x = g.input({1, 3, 8, 8});
  ValueId conv = g.node("Conv", {x, g.weights({6, 3, 3, 3}), g.weights({6})}, {1, 6, 6, 6});
  const Shape c = {6};
  ValueId bn = g.node("BatchNormalization",
                      {conv, g.weights(c), g.weights(c), g.weights(c), g.weights(c, 0.2f, 1.5f)},
                      {1, 6, 6, 6});
  expect_matches_reference(g.finish(g.node("Relu", {bn}, {1, 6, 6, 6})));
}

TEST(XnnpackBackendTest, MatMulWithBiasAddMatchesReference) {
  GraphMaker g;
  ValueId x = g.input({3, 4, 16});
  ValueId product = g.node("MatMul", {x, g.weights({16, 8})}, {3, 4, 8});
  ValueId biased = g.node("Add", {g.weights({8}), product}, {3, 4, 8});
  ValueId act = g.node("Sigmoid", {biased}, {3, 4, 8});
  ValueId probs = g.node("Softmax", {act}, {3, 4, 8}, attrs({{"axis", std::int64_t{-1}}}));
  expect_matches_reference(g.finish(probs));
}

TEST(XnnpackBackendTest, DepthwiseSeparableBlockWithHardSwishMatchesReference) {
  GraphMaker g;
  ValueId x = g.input({1, 8, 15, 15});
  ValueId dw = g.node(
      "Conv", {x, g.weights({8, 1, 3, 3}), g.weights({8})}, {1, 8, 8, 8},
      attrs({{"group", std::int64_t{8}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}));
  ValueId act = g.node("HardSwish", {dw}, {1, 8, 8, 8});
  ValueId pw = g.node("Conv", {act, g.weights({16, 8, 1, 1})}, {1, 16, 8, 8});
  ValueId clipped = g.node("Clip", {pw, g.scalar(0.0f), g.scalar(6.0f)}, {1, 16, 8, 8});
  ValueId pool = g.node("AveragePool", {clipped}, {1, 16, 4, 4},
                        attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}));
  expect_matches_reference(g.finish(pool));
}

TEST(XnnpackBackendTest, SingleChannelInputFeedsConvWithoutATranspose) {
  GraphMaker g;
  ValueId x = g.input({2, 1, 12, 12});
  ValueId scaled = g.node("Mul", {x, g.scalar(0.5f)}, {2, 1, 12, 12});
  ValueId conv = g.node("Conv", {scaled, g.weights({4, 1, 5, 5}), g.weights({4})}, {2, 4, 8, 8});
  ValueId pool = g.node("MaxPool", {conv}, {2, 4, 4, 4},
                        attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}));
  expect_matches_reference(g.finish(pool));
}

TEST(XnnpackBackendTest, InputNeededInBothLayoutsFailsToCompile) {
  GraphMaker g;
  ValueId x = g.input({1, 2, 3, 3});
  g.output(g.node("Conv", {x, g.weights({2, 2, 1, 1})}, {1, 2, 3, 3}));
  g.output(g.node("Flatten", {x}, {1, 18}));
  Graph graph = g.finish(kNoValue);
  auto kernel = xnnpack_backend().compile(graph, CompileOptions{1});
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().find("'" + graph.value(x).name + "'"), std::string::npos)
      << kernel.error();
}

TEST(XnnpackBackendTest, NodesNoOutputDependsOnAreLeftOut) {
  GraphMaker g;
  ValueId unused_input = g.input({3, 4});
  ValueId x = g.input({3, 4});
  g.node("Relu", {unused_input}, {3, 4});
  ValueId y = g.node("Sigmoid", {x}, {3, 4});
  g.node("Neg", {y}, {3, 4});
  expect_matches_reference(g.finish(y));
}

TEST(XnnpackBackendTest, ReshapeOfAChannelsLastValueFailsToCompile) {
  GraphMaker g;
  ValueId x = g.input({1, 3, 4, 4});
  ValueId conv = g.node("Conv", {x, g.weights({2, 3, 1, 1})}, {1, 2, 4, 4});
  Graph graph = g.finish(g.node("Reshape", {conv, g.ints({1, 32})}, {1, 32}));
  for (const Node& node : graph.nodes()) EXPECT_TRUE(xnnpack_backend().supports(graph, node));
  auto kernel = xnnpack_backend().compile(graph, CompileOptions{1});
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().find("channels-last"), std::string::npos) << kernel.error();
}

TEST(XnnpackBackendTest, ReshapeOfALayoutFreeValueAfterPoolingCompiles) {
  GraphMaker g;
  ValueId x = g.input({2, 6, 5, 5});
  ValueId conv = g.node("Conv", {x, g.weights({4, 6, 3, 3})}, {2, 4, 3, 3});
  ValueId pooled = g.node("GlobalMaxPool", {conv}, {2, 4, 1, 1});
  expect_matches_reference(g.finish(g.node("Reshape", {pooled, g.ints({2, 4})}, {2, 4})));
}

TEST(XnnpackBackendTest, PartitionWithAnUnsupportedNodeFailsToCompile) {
  GraphMaker g;
  ValueId x = g.input({2, 3});
  ValueId r = g.node("Relu", {x}, {2, 3});
  Graph graph = g.finish(g.node("Transpose", {r}, {3, 2}, attrs({{"perm", Ints{1, 0}}})));
  EXPECT_FALSE(xnnpack_backend().supports(graph, graph.node(1)));
  auto kernel = xnnpack_backend().compile(graph, CompileOptions{1});
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().find("Transpose"), std::string::npos) << kernel.error();
}

TEST(XnnpackBackendTest, NonFloatTensorsAreNotSupported) {
  Graph graph;
  ValueId x = graph.add_input("x", TensorType{DType::kInt32, {4}});
  ValueId y = graph.add_value("y", TensorType{DType::kInt32, {4}});
  graph.add_node("Abs", {x}, {y});
  graph.add_output(y);
  EXPECT_FALSE(xnnpack_backend().supports(graph, graph.node(0)));
  EXPECT_FALSE(xnnpack_backend().compile(graph, CompileOptions{1}).ok());
}

TEST(XnnpackBackendTest, ConvWithComputedWeightsIsNotSupported) {
  GraphMaker g;
  ValueId x = g.input({1, 3, 4, 4});
  ValueId w = g.input({2, 3, 1, 1});
  Graph graph = g.finish(g.node("Conv", {x, w}, {1, 2, 4, 4}));
  EXPECT_FALSE(xnnpack_backend().supports(graph, graph.node(0)));
}

TEST(XnnpackBackendTest, KernelRunsAgainIntoOtherOutputBuffers) {
  Graph graph = residual_block();
  auto kernel = xnnpack_backend().compile(graph, CompileOptions{1});
  ASSERT_TRUE(kernel.ok()) << kernel.error();
  std::vector<Tensor> inputs = random_inputs(graph, 5, -1.0f, 1.0f);
  std::vector<Tensor> first = allocate_outputs(graph);
  std::vector<Tensor> second = allocate_outputs(graph);
  (*kernel)->run(inputs, first);
  (*kernel)->run(inputs, second);
  EXPECT_EQ(relative_error(second[0], first[0]), 0.0);
}

TEST(XnnpackBackendTest, KernelRejectsTensorsOfTheWrongType) {
  Graph graph = residual_block();
  auto kernel = xnnpack_backend().compile(graph, CompileOptions{1});
  ASSERT_TRUE(kernel.ok()) << kernel.error();
  std::vector<Tensor> inputs = {Tensor::allocate(f32({2, 8, 10, 9}))};
  std::vector<Tensor> outputs = allocate_outputs(graph);
  EXPECT_THROW((*kernel)->run(inputs, outputs), Error);
}

}  // namespace
}  // namespace collage::testing
