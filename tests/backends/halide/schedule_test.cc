// The schedules: the template and each of Halide's autoschedulers compile a
// fused region whose outputs match the reference executor.
#include "collage/backends/halide/schedule.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "backends/halide/halide_check.h"
#include "collage/backends/halide/halide_kernel.h"
#include "collage/backends/halide/kernel_cache.h"
#include "collage/backends/halide/lowering.h"

namespace collage::halide {
namespace {

namespace fs = std::filesystem;
using testing::attrs;
using testing::Ints;

constexpr ScheduleKind kEvery[] = {ScheduleKind::kTemplate, ScheduleKind::kMullapudi2016,
                                   ScheduleKind::kAdams2019, ScheduleKind::kLi2018};

TEST(HalideSchedules, NamesRoundTrip) {
  for (ScheduleKind kind : kEvery) EXPECT_EQ(parse_schedule(schedule_name(kind)), kind);
  EXPECT_FALSE(parse_schedule("fastest").has_value());
}

// A depthwise convolution with its bias, a ReLU and a residual Add.
Graph fused_region() {
  testing::OpGraphBuilder b;
  const ValueId x = b.input({1, 16, 12, 20});
  const ValueId conv =
      b.node("Conv", {x, b.weights({16, 1, 3, 3}), b.weights({16})}, {1, 16, 12, 20},
             attrs({{"group", std::int64_t{16}}, {"pads", Ints{1, 1, 1, 1}}}));
  const ValueId relu = b.node("Relu", {conv}, {1, 16, 12, 20});
  return b.finish(b.node("Add", {relu, x}, {1, 16, 12, 20}));
}

TEST(HalideSchedules, EveryScheduleCompilesARegionThatMatchesTheReference) {
  std::string pattern = (fs::temp_directory_path() / "collage-halide-schedule-XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const KernelCache cache(pattern);
  const Graph graph = fused_region();
  for (ScheduleKind kind : kEvery) {
    SCOPED_TRACE(schedule_name(kind));
    // Scheduling changes the Funcs: a fresh lowering per schedule.
    Result<Lowered> lowered = lower(graph);
    ASSERT_TRUE(lowered.ok()) << lowered.error();
    auto write_object = [&](const std::string& object) -> Result<bool> {
      Result<Halide::Pipeline> pipeline = schedule(*lowered, kind, kernel_target(), 2);
      if (!pipeline) return Failure{pipeline.error()};
      std::vector<Halide::Argument> arguments(lowered->params.begin(), lowered->params.end());
      pipeline->compile_to_object(object, arguments, kKernelFunction, kernel_target());
      return true;
    };
    Result<KernelLibrary> library = cache.load_or_build(schedule_name(kind), write_object, 60);
    ASSERT_TRUE(library.ok()) << library.error();
    auto kernel = make_halide_kernel(graph, std::move(*library), lowered->param_values, 2);
    const std::vector<Tensor> inputs = testing::random_inputs(graph, 5);
    std::vector<Tensor> actual = testing::allocate_outputs(graph);
    kernel->run(inputs, actual);
    EXPECT_LE(testing::relative_error(actual[0], testing::run_reference(graph, inputs)[0]), 1e-5);
  }
  fs::remove_all(pattern);
}

}  // namespace
}  // namespace collage::halide
