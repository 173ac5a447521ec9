#include "collage/cost/cache_state.h"

#include <gtest/gtest.h>

#include "collage/cost/measurer.h"

namespace collage {
namespace {

// x[1,C] -> MatMul(w1[C,C]) -> a -> Relu -> b -> MatMul(w2[C,C]) -> y: two
// weights of C*C floats, three activations of C floats, one input.
Graph two_layers(std::int64_t c) {
  Graph g;
  g.opset = 13;
  const TensorType row{DType::kFloat32, {1, c}};
  ValueId x = g.add_input("x", row);
  ValueId w1 = g.add_constant("w1", Tensor::allocate(TensorType{DType::kFloat32, {c, c}}));
  ValueId w2 = g.add_constant("w2", Tensor::allocate(TensorType{DType::kFloat32, {c, c}}));
  ValueId a = g.add_value("a", row);
  ValueId b = g.add_value("b", row);
  ValueId y = g.add_value("y", row);
  g.add_node("MatMul", {x, w1}, {a}, {}, "mm1");
  g.add_node("Relu", {a}, {b}, {}, "relu");
  g.add_node("MatMul", {b, w2}, {y}, {}, "mm2");
  g.add_output(y);
  return g;
}

TEST(CacheStateTest, TheRestOfTheModelTouchesItsInputsItsWeightsAndWhatItComputes) {
  const Graph g = two_layers(64);
  const std::size_t row = 64 * 4;
  const std::size_t weight = 64 * 64 * 4;
  // Outside the last MatMul: x, w1, a (mm1's output) and b (relu's output).
  EXPECT_EQ(bytes_touched_outside(g, {2}), row + weight + row + row);
  // Outside the first: the Relu's and the second MatMul's weight and outputs; x
  // is read by the partition alone.
  EXPECT_EQ(bytes_touched_outside(g, {0}), weight + row + row);
  EXPECT_EQ(bytes_touched_outside(g, {0, 1, 2}), 0u);
}

TEST(CacheStateTest, EvictionIsNoneForASmallModelAPowerOfTwoAboveAndCapped) {
  // Caches unknown: the whole rest of the model is streamed.
  const CacheSizes unknown;
  // 64x64 weights: 16 KiB each, the rest of the model fits in L2.
  EXPECT_EQ(eviction_bytes(two_layers(64), {2}, 2, unknown), 0u);
  // 512x512 weights: 1 MiB and a little more, rounded up to 2 MiB.
  EXPECT_EQ(eviction_bytes(two_layers(512), {2}, 2, unknown), std::size_t{2} << 20);
  // 8192x8192 weights: 256 MiB, more than the cap.
  EXPECT_EQ(eviction_bytes(two_layers(8192), {2}, 2, unknown), kMaxEvictionBytes);
}

TEST(CacheStateTest, AModelHalfTheLastLevelHoldsIsEvictedFromThePrivateCachesOnly) {
  // 2048x2048 weights: 16 MiB each, the model a little over 32 MiB.
  const Graph model = two_layers(2048);
  const std::size_t rest = std::size_t{32} << 20;  // w1 and the rows, rounded up
  // 1 MiB private per core, 256 MiB last level: the model stays in the last
  // level, so a few times the private caches of the threads are streamed.
  const CacheSizes large_last_level{std::size_t{1} << 20, std::size_t{256} << 20};
  EXPECT_EQ(eviction_bytes(model, {2}, 2, large_last_level),
            kPrivateCacheMultiple * (std::size_t{2} << 20));
  EXPECT_EQ(eviction_bytes(model, {2}, 1, large_last_level),
            kPrivateCacheMultiple * (std::size_t{1} << 20));
  // 32 MiB last level: the rest of the model evicts the partition from it.
  const CacheSizes small_last_level{std::size_t{1} << 20, std::size_t{32} << 20};
  EXPECT_EQ(eviction_bytes(model, {2}, 2, small_last_level), rest);
  // Never more than the rest of the model touches.
  const CacheSizes large_private{std::size_t{64} << 20, std::size_t{1} << 30};
  EXPECT_EQ(eviction_bytes(model, {2}, 2, large_private), rest);
}

TEST(CacheStateTest, TheMachinesCachesAreReadWhereLinuxTellsThem) {
  const CacheSizes& caches = machine_caches();
  if (caches.last_level == 0) GTEST_SKIP() << "no cache sizes in sysfs";
  EXPECT_GT(caches.per_core, 0u);
  EXPECT_GE(caches.last_level, caches.per_core);
}

TEST(CacheStateTest, CandidatesOfModelsOfDifferentSizeAreKeyedApartOnlyWhenCachesAreAsInAPlan) {
  MeasureOptions plan_caches;
  EXPECT_NE(candidate_context(two_layers(64), {2}, plan_caches),
            candidate_context(two_layers(512), {2}, plan_caches));
  MeasureOptions back_to_back;
  back_to_back.plan_caches = false;
  EXPECT_EQ(candidate_context(two_layers(512), {2}, back_to_back), "");
  EXPECT_NE(measurement_context("m", plan_caches), measurement_context("m", back_to_back));
}

TEST(CacheStateTest, AnEvictorKeepsItsBufferAtTheLargestSizeAskedFor) {
  CacheEvictor evictor(2);
  evictor.evict(std::size_t{1} << 20);
  EXPECT_EQ(evictor.bytes(), std::size_t{1} << 20);
  evictor.evict(std::size_t{1} << 19);
  EXPECT_EQ(evictor.bytes(), std::size_t{1} << 20);
  evictor.evict(std::size_t{2} << 20);
  EXPECT_EQ(evictor.bytes(), std::size_t{2} << 20);
  touch({Tensor::allocate(TensorType{DType::kFloat32, {1000}})}, 2);
}

TEST(CacheStateTest, RewritingInputsLeavesTheirValuesAsTheyWere) {
  // Sizes off the cache line, one shorter than a line, and an empty one.
  std::vector<Tensor> tensors;
  for (std::int64_t n : {1000, 7, 0}) {
    Tensor t = Tensor::allocate(TensorType{DType::kFloat32, {n}});
    for (std::int64_t i = 0; i < n; ++i) t.data<float>()[i] = static_cast<float>(i) * 0.5f - 3.0f;
    tensors.push_back(t);
  }
  std::vector<Tensor> before;
  for (const Tensor& t : tensors) before.push_back(t.clone());
  rewrite(tensors, 2);
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    for (std::int64_t i = 0; i < tensors[k].numel(); ++i) {
      EXPECT_EQ(tensors[k].data<float>()[i], before[k].data<float>()[i]) << k << " " << i;
    }
  }
}

TEST(CacheStateTest, HowTheEdgesAreLeftIsPartOfTheMeasurementContext) {
  MeasureOptions written;
  MeasureOptions read = written;
  read.edges = MeasureOptions::Edges::kRead;
  EXPECT_EQ(written.edges, MeasureOptions::Edges::kInputsWritten);
  EXPECT_NE(measurement_context("m", written), measurement_context("m", read));
  // With or without the twin.
  written.twin_before = false;
  read.twin_before = false;
  EXPECT_NE(measurement_context("m", written), measurement_context("m", read));
}

}  // namespace
}  // namespace collage
