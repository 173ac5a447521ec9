// charge_planned_bodies: a partition holding a node with a planned body is
// estimated at its time when run with that body's plan; other partitions
// keep the search's estimates.
#include "collage/session/body_planning.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "collage/ir/control_flow.h"
#include "collage/ir/structural_hash.h"

namespace collage {
namespace {

TensorType f32(const Shape& shape) { return TensorType{DType::kFloat32, shape}; }

Tensor random_weight(const Shape& shape, std::uint32_t seed) {
  Tensor tensor = Tensor::allocate(f32(shape));
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> distribution(-0.5f, 0.5f);
  for (std::int64_t i = 0; i < tensor.numel(); ++i) tensor.data<float>()[i] = distribution(engine);
  return tensor;
}

// flag, x -> If(flag; then: Conv of x, else: x) -> y -> Relu ("after") -> z.
Graph model_with_a_conv_if() {
  auto branch = [](bool conv) {
    auto body = std::make_shared<Graph>();
    body->opset = 13;
    ValueId x = body->add_input("inner_x", f32({1, 4, 8, 8}));
    body->captured = 1;
    if (!conv) {
      body->add_output(x);
      return body;
    }
    Attributes same;
    same.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
    ValueId c = body->add_value("c", f32({1, 4, 8, 8}));
    body->add_node("Conv", {x, body->add_constant("w", random_weight({4, 4, 3, 3}, 3))}, {c}, same,
                   "conv");
    body->add_output(c);
    return body;
  };
  Graph g;
  g.opset = 13;
  ValueId flag = g.add_input("flag", TensorType{DType::kBool, {}});
  ValueId x = g.add_input("x", f32({1, 4, 8, 8}));
  ValueId y = g.add_value("y", f32({1, 4, 8, 8}));
  Attributes branches;
  branches.set("then_branch", Subgraph(branch(true)));
  branches.set("else_branch", Subgraph(branch(false)));
  g.add_node("If", {flag, x}, {y}, branches, "choice");
  ValueId z = g.add_value("z", f32({1, 4, 8, 8}));
  g.add_node("Relu", {y}, {z}, {}, "after");
  g.add_output(z);
  return g;
}

PlanPartition partition(const std::string& node, double estimated_ms) {
  PlanPartition partition;
  partition.backend = "native";
  partition.nodes = {node};
  partition.estimated_ms = estimated_ms;
  return partition;
}

// The model's plan, its partitions estimated at 1000 ms (the If) and 7 ms,
// with the then branch planned (on native: the charge does not depend on
// which backend runs the body).
Plan plan_with_a_planned_branch(const Graph& model) {
  Plan plan;
  plan.partitions = {partition("choice", 1000), partition("after", 7)};
  plan.estimated_ms = 1007;
  Plan branch;
  branch.partitions = {partition("conv", 1)};
  branch.model_hash = structural_hash_hex(*bodies(model.node(0))[0]);
  plan.bodies.push_back(PlanBody{"choice", 0, "then_branch", branch});
  return plan;
}

TEST(ChargePlannedBodiesTest, TheIfsPartitionIsEstimatedAtItsTimeWithThePlannedBody) {
  Graph model = model_with_a_conv_if();
  Plan plan = plan_with_a_planned_branch(model);
  PlanningOptions options;
  charge_planned_bodies(model, plan, options);
  ASSERT_TRUE(plan.partitions[0].estimated_ms.has_value());
  // A timed run of an 8x8 convolution, not the 1000 ms the plan said.
  EXPECT_GT(*plan.partitions[0].estimated_ms, 0.0);
  EXPECT_LT(*plan.partitions[0].estimated_ms, 1000.0);
  EXPECT_EQ(plan.partitions[1].estimated_ms, 7.0);
  ASSERT_TRUE(plan.estimated_ms.has_value());
  EXPECT_NEAR(*plan.estimated_ms, *plan.partitions[0].estimated_ms + 7.0, 1e-9);
}

TEST(ChargePlannedBodiesTest, APlanThatCannotRunKeepsItsEstimates) {
  Graph model = model_with_a_conv_if();
  Plan plan = plan_with_a_planned_branch(model);
  plan.partitions[1].backend = "no_such_backend";
  PlanningOptions options;
  std::vector<std::string> progress;
  options.progress = [&progress](const TuneProgress& event) { progress.push_back(event.message); };
  charge_planned_bodies(model, plan, options);
  EXPECT_EQ(plan.partitions[0].estimated_ms, 1000.0);
  EXPECT_EQ(plan.estimated_ms, 1007.0);
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_NE(progress[0].find("keeps its estimate"), std::string::npos) << progress[0];
}

}  // namespace
}  // namespace collage
