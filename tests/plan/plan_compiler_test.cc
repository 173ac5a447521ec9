#include "collage/plan/plan_compiler.h"

#include <gtest/gtest.h>

#include <random>

#include "collage/ir/error.h"
#include "collage/runtime/random_inputs.h"

namespace collage {
namespace {

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

Tensor random_weight(const Shape& shape, std::uint32_t seed) {
  Tensor tensor = Tensor::allocate(f32(shape));
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> distribution(-0.5f, 0.5f);
  for (std::int64_t i = 0; i < tensor.numel(); ++i) tensor.data<float>()[i] = distribution(engine);
  return tensor;
}

// x -> conv1 -> relu1 -> conv2 -> relu2 -> flat (Flatten) -> y
Graph conv_chain() {
  Graph g;
  g.opset = 13;
  ValueId x = g.add_input("x", f32({1, 4, 8, 8}));
  Attributes same;
  same.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
  ValueId c1 = g.add_value("c1", f32({1, 6, 8, 8}));
  g.add_node("Conv", {x, g.add_constant("w1", random_weight({6, 4, 3, 3}, 1))}, {c1}, same,
             "conv1");
  ValueId r1 = g.add_value("r1", f32({1, 6, 8, 8}));
  g.add_node("Relu", {c1}, {r1}, {}, "relu1");
  ValueId c2 = g.add_value("c2", f32({1, 5, 8, 8}));
  g.add_node("Conv", {r1, g.add_constant("w2", random_weight({5, 6, 3, 3}, 2))}, {c2}, same,
             "conv2");
  ValueId r2 = g.add_value("r2", f32({1, 5, 8, 8}));
  g.add_node("Relu", {c2}, {r2}, {}, "relu2");
  ValueId y = g.add_value("y", f32({1, 320}));
  g.add_node("Flatten", {r2}, {y}, {}, "flat");
  g.add_output(y);
  return g;
}

Plan plan_of(const std::vector<std::pair<std::string, std::vector<std::string>>>& partitions) {
  Plan plan;
  for (const auto& [backend, nodes] : partitions) {
    PlanPartition partition;
    partition.backend = backend;
    partition.nodes = nodes;
    plan.partitions.push_back(partition);
  }
  return plan;
}

std::vector<float> values_of(const Tensor& tensor) {
  return {tensor.data<float>(), tensor.data<float>() + tensor.numel()};
}

bool registry_has(const std::string& name) {
  for (const std::string& n : BackendRegistry::global().names()) {
    if (n == name) return true;
  }
  return false;
}

TEST(PlanCompilerTest, AdjacentChannelsLastPartitionsExchangeNhwcAndMatchNative) {
  if (!registry_has("xnnpack")) GTEST_SKIP() << "no XNNPACK in this build";
  Graph model = conv_chain();
  Plan mixed = plan_of(
      {{"xnnpack", {"conv1", "relu1"}}, {"xnnpack", {"conv2", "relu2"}}, {"native", {"flat"}}});
  const BackendRegistry& registry = BackendRegistry::global();
  std::vector<const Backend*> backends = {registry.find("xnnpack"), registry.find("xnnpack"),
                                          registry.find("native")};
  std::vector<bool> channels_last = channels_last_values(model, {{0, 1}, {2, 3}, {4}}, backends);
  // r1 goes from XNNPACK to XNNPACK; r2 goes to native, which reads NCHW.
  EXPECT_TRUE(channels_last[static_cast<std::size_t>(*model.find_value("r1"))]);
  EXPECT_FALSE(channels_last[static_cast<std::size_t>(*model.find_value("r2"))]);
  EXPECT_FALSE(channels_last[static_cast<std::size_t>(*model.find_value("c1"))]);

  std::map<std::string, Tensor> inputs = random_inputs(model);
  Executor executor = compile_plan(model, mixed, registry, 2);
  Executor native = compile_plan(
      model, plan_of({{"native", {"conv1", "relu1", "conv2", "relu2", "flat"}}}), registry, 1);
  std::vector<float> expected = values_of(native.run(inputs).at("y"));
  for (int run = 0; run < 2; ++run) {
    std::vector<float> actual = values_of(executor.run(inputs).at("y"));
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
      ASSERT_NEAR(actual[i], expected[i], 1e-4) << "element " << i;
    }
  }
}

TEST(PlanCompilerTest, AValueReadByABackendWithoutChannelsLastEdgesStaysPlain) {
  Graph model = conv_chain();
  const BackendRegistry& registry = BackendRegistry::global();
  const Backend* native = registry.find("native");
  std::vector<bool> channels_last =
      channels_last_values(model, {{0, 1}, {2, 3}, {4}}, {native, native, native});
  for (bool value : channels_last) EXPECT_FALSE(value);
}

TEST(PlanCompilerTest, ANodeThePlanLeavesOutIsAnErrorNamingIt) {
  Graph model = conv_chain();
  Plan plan = plan_of({{"native", {"conv1", "relu1", "conv2", "relu2"}}});
  try {
    compile_plan(model, plan, BackendRegistry::global(), 1);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("flat"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace collage
