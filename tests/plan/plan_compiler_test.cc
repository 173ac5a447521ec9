#include "collage/plan/plan_compiler.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <random>

#include "backends/quantized_graphs.h"
#include "collage/ir/control_flow.h"
#include "collage/ir/error.h"
#include "collage/ir/structural_hash.h"
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

// x -> conv1 -> relu1 -> conv2 -> relu2 -> flat (Flatten) -> y, with `mid`
// channels between the convolutions and `out` after the second; with
// `pooled`, a 3x3 MaxPool `pool` (stride 1, output p) between relu1 and
// conv2.
Graph conv_chain(std::int64_t mid = 6, std::int64_t out = 5, bool pooled = false) {
  Graph g;
  g.opset = 13;
  ValueId x = g.add_input("x", f32({1, 4, 8, 8}));
  Attributes same;
  same.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
  ValueId c1 = g.add_value("c1", f32({1, mid, 8, 8}));
  g.add_node("Conv", {x, g.add_constant("w1", random_weight({mid, 4, 3, 3}, 1))}, {c1}, same,
             "conv1");
  ValueId r1 = g.add_value("r1", f32({1, mid, 8, 8}));
  g.add_node("Relu", {c1}, {r1}, {}, "relu1");
  if (pooled) {
    Attributes window = same;
    window.set("kernel_shape", std::vector<std::int64_t>{3, 3});
    ValueId p = g.add_value("p", f32({1, mid, 8, 8}));
    g.add_node("MaxPool", {r1}, {p}, window, "pool");
    r1 = p;
  }
  ValueId c2 = g.add_value("c2", f32({1, out, 8, 8}));
  g.add_node("Conv", {r1, g.add_constant("w2", random_weight({out, mid, 3, 3}, 2))}, {c2}, same,
             "conv2");
  ValueId r2 = g.add_value("r2", f32({1, out, 8, 8}));
  g.add_node("Relu", {c2}, {r2}, {}, "relu2");
  ValueId y = g.add_value("y", f32({1, out * 64}));
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

// Runs `plan` twice (a second run reuses every buffer) and compares its
// output y with the model's as one native partition.
void expect_plan_matches_native(const Graph& model, const Plan& plan) {
  const BackendRegistry& registry = BackendRegistry::global();
  std::map<std::string, Tensor> inputs = random_inputs(model);
  Executor executor = compile_plan(model, plan, registry, 2);
  std::vector<std::string> every_node;
  for (const Node& node : model.nodes()) every_node.push_back(node.name);
  Executor native = compile_plan(model, plan_of({{"native", every_node}}), registry, 1);
  std::vector<float> expected = values_of(native.run(inputs).at("y"));
  for (int run = 0; run < 2; ++run) {
    std::vector<float> actual = values_of(executor.run(inputs).at("y"));
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
      ASSERT_NEAR(actual[i], expected[i], 1e-4) << "element " << i;
    }
  }
}

// The layouts negotiated for the plan conv1+relu1 | conv2+relu2 | flat.
std::map<std::string, EdgeLayout> chain_layouts(const Graph& model, const std::string& first,
                                                const std::string& second) {
  const BackendRegistry& registry = BackendRegistry::global();
  std::vector<EdgeLayout> layouts = negotiate_edge_layouts(
      model, {{0, 1}, {2, 3}, {4}},
      {registry.find(first), registry.find(second), registry.find("native")});
  std::map<std::string, EdgeLayout> named;
  for (const char* name : {"x", "c1", "r1", "c2", "r2", "y"}) {
    named[name] = layouts[static_cast<std::size_t>(*model.find_value(name))];
  }
  return named;
}

Plan chain_plan(const std::string& first, const std::string& second) {
  return plan_of({{first, {"conv1", "relu1"}}, {second, {"conv2", "relu2"}}, {"native", {"flat"}}});
}

TEST(PlanCompilerTest, AdjacentChannelsLastPartitionsExchangeNhwcAndMatchNative) {
  if (!registry_has("xnnpack")) GTEST_SKIP() << "no XNNPACK in this build";
  Graph model = conv_chain();
  std::map<std::string, EdgeLayout> layouts = chain_layouts(model, "xnnpack", "xnnpack");
  // r1 goes from XNNPACK to XNNPACK; r2 goes to native, which reads NCHW.
  EXPECT_EQ(layouts["r1"], EdgeLayout::kChannelsLast);
  EXPECT_EQ(layouts["r2"], EdgeLayout::kPlain);
  EXPECT_EQ(layouts["c1"], EdgeLayout::kPlain);
  EXPECT_EQ(layouts["x"], EdgeLayout::kPlain);
  expect_plan_matches_native(model, chain_plan("xnnpack", "xnnpack"));
}

TEST(PlanCompilerTest, AdjacentOnednnPartitionsExchangeTheLayoutTheyComputeInAndMatchNative) {
  if (!registry_has("onednn")) GTEST_SKIP() << "no oneDNN in this build";
  Graph model = conv_chain(32, 16);
  std::map<std::string, EdgeLayout> layouts = chain_layouts(model, "onednn", "onednn");
  const EdgeLayout preferred = BackendRegistry::global().find("onednn")->edge_layouts().front();
  EXPECT_EQ(layouts["r1"], preferred) << edge_layout_name(layouts["r1"]);
  EXPECT_EQ(layouts["r2"], EdgeLayout::kPlain);
  expect_plan_matches_native(model, chain_plan("onednn", "onednn"));
}

TEST(PlanCompilerTest, AComputeLayoutIsTheLayoutItsPartitionsExchangeAndMatchesNative) {
  if (!registry_has("onednn")) GTEST_SKIP() << "no oneDNN in this build";
  const Backend& onednn = *BackendRegistry::global().find("onednn");
  if (onednn.compute_layouts().empty()) GTEST_SKIP() << "oneDNN offers no other layout here";
  const EdgeLayout other = onednn.compute_layouts().front();
  EXPECT_NE(other, onednn.edge_layouts().front());
  Graph model = conv_chain(32, 16);
  const BackendRegistry& registry = BackendRegistry::global();
  std::vector<EdgeLayout> layouts = negotiate_edge_layouts(
      model, {{0, 1}, {2, 3}, {4}}, {&onednn, &onednn, registry.find("native")},
      {other, other, std::nullopt});
  EXPECT_EQ(layouts[static_cast<std::size_t>(*model.find_value("r1"))], other);
  Plan plan = chain_plan("onednn", "onednn");
  plan.strategy = "collage";
  plan.compute_layouts["onednn"] = edge_layout_name(other);
  expect_plan_matches_native(model, plan);
  // The same partitions in another layout are another program.
  EXPECT_NE(plan.partitions_signature(), chain_plan("onednn", "onednn").partitions_signature());
  EXPECT_EQ(plan.label(), "collage [onednn:" + edge_layout_name(other) + "]");
}

TEST(PlanCompilerTest, ANativePoolBetweenOnednnPartitionsTakesTheirLayoutAndMatchesNative) {
  if (!registry_has("onednn")) GTEST_SKIP() << "no oneDNN in this build";
  const BackendRegistry& registry = BackendRegistry::global();
  const Backend& onednn = *registry.find("onednn");
  const Backend& native = registry.native();
  Graph model = conv_chain(32, 16, /*pooled=*/true);
  std::vector<std::optional<EdgeLayout>> asked = {std::nullopt};
  for (EdgeLayout other : onednn.compute_layouts()) asked.push_back(other);
  for (const std::optional<EdgeLayout>& layout : asked) {
    const EdgeLayout expected = layout.value_or(onednn.edge_layouts().front());
    std::vector<EdgeLayout> layouts = negotiate_edge_layouts(
        model, {{0, 1}, {2}, {3, 4}, {5}}, {&onednn, &native, &onednn, &native},
        {layout, std::nullopt, layout, std::nullopt});
    // The pool follows oneDNN's layout in and hands it on: no conversion.
    EXPECT_EQ(layouts[static_cast<std::size_t>(*model.find_value("r1"))], expected);
    EXPECT_EQ(layouts[static_cast<std::size_t>(*model.find_value("p"))], expected);
    Plan plan = plan_of({{"onednn", {"conv1", "relu1"}},
                         {"native", {"pool"}},
                         {"onednn", {"conv2", "relu2"}},
                         {"native", {"flat"}}});
    if (layout) plan.compute_layouts["onednn"] = edge_layout_name(*layout);
    expect_plan_matches_native(model, plan);
  }
}

TEST(PlanCompilerTest, ANativeAddOfAGraphInputAndAOnednnValueComputesInOnednnsLayout) {
  if (!registry_has("onednn")) GTEST_SKIP() << "no oneDNN in this build";
  const BackendRegistry& registry = BackendRegistry::global();
  const Backend& onednn = *registry.find("onednn");
  Graph model;
  model.opset = 13;
  ValueId x = model.add_input("x", f32({1, 32, 8, 8}));
  Attributes same;
  same.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
  ValueId c1 = model.add_value("c1", f32({1, 32, 8, 8}));
  model.add_node("Conv", {x, model.add_constant("w1", random_weight({32, 32, 3, 3}, 1))}, {c1},
                 same, "conv1");
  ValueId sum = model.add_value("sum", f32({1, 32, 8, 8}));
  model.add_node("Add", {c1, x}, {sum}, {}, "add");
  ValueId c2 = model.add_value("c2", f32({1, 16, 8, 8}));
  model.add_node("Conv", {sum, model.add_constant("w2", random_weight({16, 32, 3, 3}, 2))}, {c2},
                 same, "conv2");
  ValueId y = model.add_value("y", f32({1, 16 * 64}));
  model.add_node("Flatten", {c2}, {y}, {}, "flat");
  model.add_output(y);
  const std::vector<EdgeLayout> layouts = negotiate_edge_layouts(
      model, {{0}, {1}, {2}, {3}}, {&onednn, &registry.native(), &onednn, &registry.native()});
  const EdgeLayout preferred = onednn.edge_layouts().front();
  // x comes plain and is converted inside the Add's kernel; the Add
  // computes in oneDNN's layout and hands it to conv2.
  EXPECT_EQ(layouts[static_cast<std::size_t>(x)], EdgeLayout::kPlain);
  EXPECT_EQ(layouts[static_cast<std::size_t>(c1)], preferred);
  EXPECT_EQ(layouts[static_cast<std::size_t>(sum)], preferred);
  const Plan plan = plan_of(
      {{"onednn", {"conv1"}}, {"native", {"add"}}, {"onednn", {"conv2"}}, {"native", {"flat"}}});
  expect_plan_matches_native(model, plan);
}

TEST(PlanCompilerTest, AnUnknownComputeLayoutIsAnError) {
  Graph model = conv_chain();
  Plan plan = plan_of({{"native", {"conv1", "relu1", "conv2", "relu2", "flat"}}});
  plan.compute_layouts["native"] = "diagonal";
  try {
    compile_plan(model, plan, BackendRegistry::global(), 1);
    FAIL() << "compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'diagonal' is not plain"), std::string::npos) << e.what();
  }
}

TEST(PlanCompilerTest, ABlockedLayoutNeedsChannelsTheBlockDivides) {
  if (!registry_has("onednn")) GTEST_SKIP() << "no oneDNN in this build";
  Graph model = conv_chain(12, 16);
  std::map<std::string, EdgeLayout> layouts = chain_layouts(model, "onednn", "onednn");
  // 12 channels: no block divides them, so the value goes channels-last
  // (oneDNN's first choice, or its choice after a blocked one).
  EXPECT_EQ(layouts["r1"], EdgeLayout::kChannelsLast);
  expect_plan_matches_native(model, chain_plan("onednn", "onednn"));
}

TEST(PlanCompilerTest, AOnednnXnnpackBoundaryIsChannelsLastAndMatchesNative) {
  if (!registry_has("onednn") || !registry_has("xnnpack")) GTEST_SKIP() << "needs both";
  Graph model = conv_chain(32, 16);
  EXPECT_EQ(chain_layouts(model, "onednn", "xnnpack")["r1"], EdgeLayout::kChannelsLast);
  EXPECT_EQ(chain_layouts(model, "xnnpack", "onednn")["r1"], EdgeLayout::kChannelsLast);
  expect_plan_matches_native(model, chain_plan("onednn", "xnnpack"));
  expect_plan_matches_native(model, chain_plan("xnnpack", "onednn"));
}

TEST(PlanCompilerTest, Int8PartitionsOfOnednnAndXnnpackExchangeNhwcBytesAndMatchNative) {
  if (!registry_has("onednn") || !registry_has("xnnpack")) GTEST_SKIP() << "needs both";
  const BackendRegistry& registry = BackendRegistry::global();
  const Graph model = testing::qconv_add_chain();
  const Backend* onednn = registry.find("onednn");
  const Backend* xnnpack = registry.find("xnnpack");
  if (!onednn->supports(model, model.node(1))) GTEST_SKIP() << "oneDNN runs no int8 here";
  const std::vector<EdgeLayout> layouts =
      negotiate_edge_layouts(model, {{0}, {1}, {2, 3}}, {xnnpack, onednn, xnnpack});
  EXPECT_EQ(layouts[static_cast<std::size_t>(*model.find_value("q"))], EdgeLayout::kChannelsLast);
  EXPECT_EQ(layouts[static_cast<std::size_t>(*model.find_value("y8"))], EdgeLayout::kChannelsLast);
  const Plan plan = plan_of(
      {{"xnnpack", {"quantize"}}, {"onednn", {"conv"}}, {"xnnpack", {"add", "dequantize"}}});
  std::map<std::string, Tensor> inputs = random_inputs(model);
  Executor mixed = compile_plan(model, plan, registry, 2);
  Executor native = compile_plan(
      model, plan_of({{"native", {"quantize", "conv", "add", "dequantize"}}}), registry, 1);
  const std::vector<float> expected = values_of(native.run(inputs).at("y"));
  for (int run = 0; run < 2; ++run) {
    const std::vector<float> actual = values_of(mixed.run(inputs).at("y"));
    ASSERT_EQ(actual.size(), expected.size());
    // The convolution's one step (0.05, added twice) and the add's own
    // rounding: within two steps of the sum's scale.
    for (std::size_t i = 0; i < actual.size(); ++i) {
      ASSERT_NEAR(actual[i], expected[i], 0.09f * 2.001f) << "element " << i;
    }
  }
}

TEST(PlanCompilerTest, AValueReadByABackendWithoutChannelsLastEdgesStaysPlain) {
  Graph model = conv_chain(32, 16);
  for (const auto& [name, layout] : chain_layouts(model, "native", "native")) {
    EXPECT_EQ(layout, EdgeLayout::kPlain) << name;
  }
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

// flag, x -> If(flag; then: Conv+Relu of x, else: Conv of x) -> y.
Graph model_with_a_conv_if() {
  auto branch = [](bool relu, std::uint32_t seed) {
    auto body = std::make_shared<Graph>();
    body->opset = 13;
    ValueId x = body->add_input("inner_x", f32({1, 4, 8, 8}));
    body->captured = 1;
    Attributes same;
    same.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
    ValueId c = body->add_value(relu ? "then_c" : "else_c", f32({1, 8, 8, 8}));
    body->add_node("Conv", {x, body->add_constant("w", random_weight({8, 4, 3, 3}, seed))}, {c},
                   same, "conv");
    if (!relu) {
      body->add_output(c);
      return body;
    }
    ValueId r = body->add_value("then_r", f32({1, 8, 8, 8}));
    body->add_node("Relu", {c}, {r}, {}, "relu");
    body->add_output(r);
    return body;
  };
  Graph g;
  g.opset = 13;
  ValueId flag = g.add_input("flag", TensorType{DType::kBool, {}});
  ValueId x = g.add_input("x", f32({1, 4, 8, 8}));
  ValueId y = g.add_value("y", f32({1, 8, 8, 8}));
  Attributes branches;
  branches.set("then_branch", Subgraph(branch(true, 7)));
  branches.set("else_branch", Subgraph(branch(false, 8)));
  g.add_node("If", {flag, x}, {y}, branches, "choice");
  g.add_output(y);
  return g;
}

// The If's plan with its then branch planned on `backend` (hash: the
// branch's, unless `hash` is given).
Plan plan_with_a_planned_branch(const Graph& model, const std::string& backend,
                                std::optional<std::string> hash = std::nullopt) {
  Plan plan = plan_of({{"native", {"choice"}}});
  PlanBody body{"choice", 0, "then_branch", plan_of({{backend, {"conv", "relu"}}})};
  body.plan.model_hash = hash.value_or(structural_hash_hex(*bodies(model.node(0))[0]));
  plan.bodies.push_back(body);
  return plan;
}

std::vector<float> run_if(Executor& executor, const Graph& model, bool taken) {
  std::map<std::string, Tensor> inputs = random_inputs(model);
  *inputs.at("flag").data<bool>() = taken;
  return values_of(executor.run(inputs).at("y"));
}

TEST(PlanCompilerTest, ABranchRunsByItsPlanAndMatchesNativeWhicheverBranchIsTaken) {
  if (!registry_has("onednn")) GTEST_SKIP() << "no oneDNN in this build";
  const BackendRegistry& registry = BackendRegistry::global();
  Graph model = model_with_a_conv_if();
  Executor planned = compile_plan(model, plan_with_a_planned_branch(model, "onednn"), registry, 2);
  Executor native = compile_plan(model, plan_of({{"native", {"choice"}}}), registry, 1);
  for (bool taken : {true, false}) {
    for (int run = 0; run < 2; ++run) {
      std::vector<float> expected = run_if(native, model, taken);
      std::vector<float> actual = run_if(planned, model, taken);
      ASSERT_EQ(actual.size(), expected.size());
      for (std::size_t i = 0; i < actual.size(); ++i) {
        ASSERT_NEAR(actual[i], expected[i], 1e-4) << "taken " << taken << ", element " << i;
      }
    }
  }
}

TEST(PlanCompilerTest, ABodyPlanForOtherShapesLeavesTheBodyNative) {
  const BackendRegistry& registry = BackendRegistry::global();
  Graph model = model_with_a_conv_if();
  Executor planned = compile_plan(
      model, plan_with_a_planned_branch(model, "native", std::string(16, '0')), registry, 1);
  Executor native = compile_plan(model, plan_of({{"native", {"choice"}}}), registry, 1);
  EXPECT_EQ(run_if(planned, model, true), run_if(native, model, true));
}

TEST(PlanCompilerTest, ABodyPlanOfANodeTheModelLacksIsAnErrorNamingIt) {
  Graph model = model_with_a_conv_if();
  Plan plan = plan_with_a_planned_branch(model, "native");
  plan.bodies[0].node = "no_such_if";
  try {
    compile_plan(model, plan, BackendRegistry::global(), 1);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_if"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bodies[0]"), std::string::npos) << e.what();
  }
  plan = plan_with_a_planned_branch(model, "native");
  plan.bodies[0].index = 2;
  EXPECT_THROW(compile_plan(model, plan, BackendRegistry::global(), 1), Error);
}

TEST(PlanCompilerTest, PlansThatDifferOnlyInABodyHaveDifferentSignatures) {
  Graph model = model_with_a_conv_if();
  EXPECT_NE(plan_with_a_planned_branch(model, "native").partitions_signature(),
            plan_with_a_planned_branch(model, "onednn").partitions_signature());
  EXPECT_NE(plan_with_a_planned_branch(model, "native").partitions_signature(),
            plan_of({{"native", {"choice"}}}).partitions_signature());
}

}  // namespace
}  // namespace collage
