#include "collage/session/tuning.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "collage/backends/registry.h"
#include "collage/cost/cache_keys.h"
#include "collage/cost/in_context_estimator.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/search/strategy.h"
#include "collage/session/measuring.h"
#include "collage/session/tuner.h"
#include "onnx/temp_dir.h"

namespace collage {
namespace {

// x[1,16,12,12] -> Conv 3x3 -> Relu -> Neg -> Conv 3x3 -> Relu: sixteen
// channels, which oneDNN's blocked layouts divide.
Graph conv_model() {
  Graph graph;
  graph.opset = 13;
  const TensorType type{DType::kFloat32, {1, 16, 12, 12}};
  ValueId last = graph.add_input("x", type);
  auto add = [&](const std::string& op, const std::string& name) {
    std::vector<ValueId> inputs = {last};
    Attributes attributes;
    if (op == "Conv") {
      std::vector<float> weights(16 * 16 * 9);
      for (std::size_t i = 0; i < weights.size(); ++i) {
        weights[i] = static_cast<float>(i % 11) * 0.02f - 0.1f;
      }
      inputs.push_back(
          graph.add_constant(name + "_w", Tensor::from_vector(weights, {16, 16, 3, 3})));
      attributes.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
    }
    ValueId out = graph.add_value(name + "_out", type);
    graph.add_node(op, inputs, {out}, attributes, name);
    last = out;
  };
  add("Conv", "conv1");
  add("Relu", "relu1");
  add("Neg", "neg");
  add("Conv", "conv2");
  add("Relu", "relu2");
  graph.add_output(last);
  return graph;
}

class TuningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Backend* onednn = BackendRegistry::global().find("onednn");
    if (onednn == nullptr || onednn->compute_layouts().empty()) {
      GTEST_SKIP() << "oneDNN computes in no other layout here";
    }
    options_.backends = {"native", "onednn"};
    options_.cache_path = dir_.file("cache.sqlite");
    options_.isolate = false;
    options_.search.budget_seconds = 1;
    // The convolutions on oneDNN, whatever the machine times: the plan then
    // has a variant in oneDNN's other layout.
    options_.placement.pin("op:Conv=onednn");
    layout_ = onednn->compute_layouts().front();
  }

  testing::TempDir dir_;
  PlanningOptions options_;
  EdgeLayout layout_{};
};

// The searched plan in another compute layout is estimated from its
// partitions measured in that layout, not given the searched layout's
// estimate: `compare` shows each entry's own, and the search's own for each.
TEST_F(TuningTest, TheSearchedPlanInEachLayoutIsEstimatedInIt) {
  const Graph graph = conv_model();
  options_.search.layout = "own";
  CompareOutcome outcome = compare_strategies(graph, options_, 2);
  std::vector<const Plan*> collage;
  for (const EvaluatedPlan& evaluated : outcome.results) {
    if (evaluated.plan.strategy == "collage") collage.push_back(&evaluated.plan);
  }
  ASSERT_EQ(collage.size(), 2u);
  const Plan& variant = *collage[0];
  const Plan& searched = *collage[1];
  EXPECT_EQ(variant.compute_layouts.at("onednn"), edge_layout_name(layout_));
  EXPECT_TRUE(searched.compute_layouts.empty());
  for (const Plan* plan : collage) {
    ASSERT_TRUE(plan->estimated_ms.has_value()) << plan->label();
    ASSERT_TRUE(plan->search.search_estimated_ms.has_value()) << plan->label();
    EXPECT_GT(*plan->estimated_ms, 0.0) << plan->label();
    double parts = 0;
    for (const PlanPartition& partition : plan->partitions) {
      ASSERT_TRUE(partition.estimated_ms.has_value()) << plan->label();
      parts += *partition.estimated_ms;
    }
    EXPECT_NEAR(parts, *plan->estimated_ms, 1e-9) << plan->label();
  }
  // Measured apart, in two layouts: not the one estimate copied.
  EXPECT_NE(*variant.search.search_estimated_ms, *searched.search.search_estimated_ms);
}

// With --search-layout each, the search runs in oneDNN's own layout and in
// its other one; tune runs both searched plans (each also in the other
// layout) beside the baselines, under labels that tell them apart, and
// keeps the faster.
TEST_F(TuningTest, EachLayoutIsSearchedAndEverySearchedPlanRuns) {
  const Graph graph = conv_model();
  options_.search.layout = "each";
  const std::vector<Plan> searched = searched_plans(graph, options_);
  ASSERT_EQ(searched.size(), 2u);
  EXPECT_EQ(searched[0].search.layout, "own");
  EXPECT_EQ(searched[1].search.layout, edge_layout_name(layout_));
  EXPECT_EQ(searched[1].label().rfind("collage@" + edge_layout_name(layout_), 0), 0u);

  const TuneOutcome outcome = tune_model(graph, options_, {.verify = true, .repeat = 2});
  std::set<std::string> labels;
  std::set<std::string> layouts;
  for (const EvaluatedPlan& evaluated : outcome.evaluated) {
    if (evaluated.plan.strategy != "collage") continue;
    labels.insert(evaluated.plan.label());
    layouts.insert(evaluated.plan.search.layout);
  }
  EXPECT_EQ(labels.size(), 4u);
  EXPECT_EQ(layouts, (std::set<std::string>{"own", edge_layout_name(layout_)}));
  ASSERT_TRUE(outcome.decision.has_value());
  EXPECT_EQ(outcome.evaluated[outcome.decision->searched].plan.strategy, "collage");
  EXPECT_FALSE(outcome.kept.partitions.empty());
}

// The plan searched in oneDNN's other layout has its charges there fitted
// to its runs after every variant's, so that the layout keeps its own
// plan's charges (a variant is another plan, of other partitions).
TEST_F(TuningTest, APlanSearchedInALayoutIsFittedThereLast) {
  const Graph graph = conv_model();
  options_.search.layout = "each";
  std::vector<std::string> fits;
  options_.progress = [&](const TuneProgress& progress) {
    if (progress.message.find("charges fitted to its runs there") != std::string::npos) {
      fits.push_back(progress.message);
    }
  };
  const TuneOutcome outcome = tune_model(graph, options_, {.verify = true, .repeat = 2});
  ASSERT_GE(fits.size(), 2u);
  EXPECT_NE(fits.back().find("in " + edge_layout_name(layout_) + " layout"), std::string::npos)
      << fits.back();
  for (const EvaluatedPlan& evaluated : outcome.evaluated) {
    if (evaluated.plan.strategy == "collage") {
      EXPECT_TRUE(evaluated.plan.estimated_ms.has_value()) << evaluated.plan.label();
    }
  }
}

// Tuner::estimate costs a given plan's cover as its search would, from the
// cache when the partitions were measured; a partition of a backend the
// tuner does not have gets no estimate.
TEST_F(TuningTest, ATunerEstimatesAPlansCoverInItsLayout) {
  const Graph graph = conv_model();
  const DataflowGraph dfg(graph);
  const Strategy collage = Strategy::parse("collage");
  PlanningOptions in_layout = options_;
  in_layout.search_layout = layout_;
  Plan searched = Tuner(graph, dfg, collage, in_layout).run();
  ASSERT_TRUE(searched.estimated_ms.has_value());

  Tuner again(graph, dfg, collage, in_layout);
  std::optional<Plan> estimated = again.estimate(searched);
  ASSERT_TRUE(estimated.has_value());
  ASSERT_TRUE(estimated->estimated_ms.has_value());
  EXPECT_GT(*estimated->estimated_ms, 0.0);
  EXPECT_EQ(estimated->partitions_signature(), searched.partitions_signature());

  Plan foreign = searched;
  foreign.partitions.front().backend = "nosuch";
  EXPECT_FALSE(again.estimate(foreign).has_value());
}

// The charges fitted to a plan's runs in a layout are kept for the model
// in that layout, apart from those of its own layout.
TEST_F(TuningTest, ChargesFittedInALayoutAreKeptForIt) {
  const Graph graph = conv_model();
  const DataflowGraph dfg(graph);
  const Strategy collage = Strategy::parse("collage");
  Plan searched = Tuner(graph, dfg, collage, options_).run();

  const std::vector<std::string> names = {"native", "onednn"};
  const std::string model = model_key(graph, resolve_backends(names));
  const std::string laid_out = model + "|layout " + edge_layout_name(layout_);
  auto stored = [&](const std::string& key) {
    std::unique_ptr<MeasurementCache> cache = open_planning_cache(options_);
    return PartitionOverheads::load(*cache, measuring_machine(options_), names,
                                    model_overheads_learned(key));
  };
  // The tune in its own layout learned for that layout only.
  const PartitionOverheads own = stored(model);
  ASSERT_FALSE(own.seconds.empty());
  EXPECT_TRUE(stored(laid_out).seconds.empty());

  Plan variant = searched;
  variant.compute_layouts["onednn"] = edge_layout_name(layout_);
  PlanningOptions in_layout = options_;
  in_layout.search_layout = layout_;
  std::optional<Plan> fitted = Tuner(graph, dfg, collage, in_layout).estimate_fitted(variant);
  ASSERT_TRUE(fitted.has_value());
  ASSERT_TRUE(fitted->estimated_ms.has_value());
  EXPECT_FALSE(stored(laid_out).seconds.empty());
  EXPECT_EQ(stored(model).seconds, own.seconds);
}

// A fit of the kept plan's charges that has taken PlanningOptions::
// fit_seconds stops after three profiles (a large model's retimings take
// seconds each); one within them profiles the plan five times.
TEST_F(TuningTest, AFitPastItsSecondsStopsAfterThreeProfiles) {
  const Graph graph = conv_model();
  const DataflowGraph dfg(graph);
  const Strategy collage = Strategy::parse("collage");
  for (const double seconds : {0.0, 600.0}) {
    PlanningOptions options = options_;
    options.fit_seconds = seconds;
    options.cache_path = dir_.file(seconds == 0 ? "stopped.sqlite" : "whole.sqlite");
    std::vector<std::string> fits;
    options.progress = [&](const TuneProgress& progress) {
      if (progress.message.find("charges fitted to its runs") != std::string::npos) {
        fits.push_back(progress.message);
      }
    };
    Tuner(graph, dfg, collage, options).run();
    ASSERT_FALSE(fits.empty()) << "fit_seconds " << seconds;
    const std::string profiles = seconds == 0 ? "profiled 3 times" : "profiled 5 times";
    EXPECT_NE(fits.back().find(profiles), std::string::npos) << fits.back();
  }
}

}  // namespace
}  // namespace collage
