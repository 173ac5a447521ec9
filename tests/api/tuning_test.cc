#include "collage/tuning.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "api/api_models.h"
#include "collage/collage.h"

namespace collage {
namespace {

using api_testing::conv_model_bytes;
using api_testing::ScratchDir;

class TuningTest : public ::testing::Test {
 protected:
  TuneOptions quick_options() const {
    TuneOptions options;
    options.threads = 1;
    options.cache_path = "none";
    options.search.refine_rounds = 0;
    options.repeat = 2;
    return options;
  }

  // One refinement round, in this process, its measurements cached in the
  // scratch directory: a second tune finds the first one's plan.
  TuneOptions refining_options() const {
    TuneOptions options = quick_options();
    options.isolate = false;
    options.verify = false;
    options.search.refine_rounds = 1;
    options.cache_path = dir_.file("cache.sqlite");
    return options;
  }

  ScratchDir dir_;
  std::string model_ = dir_.write("conv.onnx", conv_model_bytes());
};

TEST_F(TuningTest, TuneReturnsAPlanASessionRunsAndReportsProgress) {
  TuneOptions options = quick_options();
  options.search.screen = true;
  std::vector<TuneProgress> reports;
  options.progress = [&](const TuneProgress& p) { reports.push_back(p); };
  TuneResult result = tune(model_, options);

  ASSERT_FALSE(reports.empty());
  // The search's layout is chosen, and a backend that compiles ahead says
  // so, each with a line before and after; then the candidates are counted.
  auto first_count = std::find_if(reports.begin(), reports.end(), [](const TuneProgress& p) {
    return p.stage != TuneProgress::Stage::kCompile && p.stage != TuneProgress::Stage::kLayout;
  });
  ASSERT_NE(first_count, reports.end());
  EXPECT_EQ(first_count->stage, TuneProgress::Stage::kCandidates);
  for (auto it = reports.begin(); it != first_count; ++it) EXPECT_FALSE(it->message.empty());
  auto candidates_done = std::find_if(reports.begin(), reports.end(), [](const TuneProgress& p) {
    return p.stage == TuneProgress::Stage::kCandidates && p.finished;
  });
  ASSERT_NE(candidates_done, reports.end());
  // Screened (SearchSettings::screen): some of the candidates ran, and the
  // message counts the screens and the measurements.
  EXPECT_GT(candidates_done->done, 0U);
  EXPECT_LE(candidates_done->done, candidates_done->total);
  EXPECT_NE(candidates_done->message.find("screened"), std::string::npos);
  EXPECT_EQ(static_cast<int>(candidates_done->total), result.search.candidates);
  EXPECT_GT(result.search.measured, 0);

  // Verified: native, one baseline per other backend, then the searched
  // plans (one per layout the search measured in: "collage", or
  // "collage@own" and "collage@blocked-16"), each also in every other
  // layout its backends can compute in.
  std::size_t variants = 0;
  std::size_t searches = 0;
  for (const StrategyResult& s : result.measured) {
    if (s.strategy.find(" [") == std::string::npos) {
      if (s.strategy.rfind("collage", 0) == 0) ++searches;
      continue;
    }
    ++variants;
    const std::string base = s.strategy.substr(0, s.strategy.find(" ["));
    EXPECT_TRUE(std::any_of(result.measured.begin(), result.measured.end(),
                            [&](const StrategyResult& r) { return r.strategy == base; }))
        << s.strategy;
  }
  ASSERT_GE(searches, 1U);
  ASSERT_EQ(result.measured.size(), backends().size() + searches + variants);
  EXPECT_EQ(result.measured.front().strategy, "native");
  EXPECT_EQ(result.measured.back().strategy.rfind("collage", 0), 0U);
  EXPECT_FALSE(result.reason.empty());
  EXPECT_TRUE(result.searched_measured_ms.has_value());

  nlohmann::json plan = nlohmann::json::parse(result.plan_json);
  EXPECT_EQ(plan["strategy"], result.kept_strategy);
  result.save(dir_.file("conv.plan.json"));
  Session session(model_, {.plan_file = dir_.file("conv.plan.json")});
  EXPECT_EQ(session.strategy(), result.kept_strategy);
  EXPECT_EQ(session.threads(), 1);
}

TEST_F(TuningTest, TuneShapesMakesAPlanSetThatServesEachShape) {
  TuneOptions options = quick_options();
  options.backends = {"native"};
  options.isolate = false;
  options.verify = false;
  const std::vector<std::map<std::string, std::vector<std::int64_t>>> shapes{
      {{"x", {1, 8, 12, 12}}}, {{"x", {2, 8, 12, 12}}}};
  std::vector<TuneResult> results = tune_shapes(model_, shapes, options);
  ASSERT_EQ(results.size(), 2u);
  const std::string set = plan_set_json(results);
  EXPECT_EQ(nlohmann::json::parse(set)["plans"].size(), 2u);
  Session session(model_, {.plan_json = set});
  std::vector<float> x(2 * 8 * 12 * 12, 0.25f);
  for (std::int64_t batch : {1, 2}) {
    EXPECT_EQ(session.run({{"x", Array::view(x.data(), {batch, 8, 12, 12})}}).at("z").dims()[0],
              batch);
  }
  EXPECT_TRUE(session.warnings().empty());
  EXPECT_THROW(tune_shapes(model_, {}, options), Error);
  EXPECT_THROW(tune_shapes(model_, {shapes[0], shapes[0]}, options), Error);
  EXPECT_THROW(plan_set_json({results[0], results[0]}), Error);
}

TEST_F(TuningTest, TuneMeasuresInAWorkerProcessByDefault) {
  TuneOptions options = quick_options();
  options.isolate = true;
  options.verify = false;
  options.backends = {"onednn"};
  TuneResult result = tune(model_, options);
  EXPECT_EQ(result.kept_strategy, "collage");
  EXPECT_GT(result.search.measured, 0);
  EXPECT_EQ(result.search.invalid, 0);
  EXPECT_TRUE(result.measured.empty());
}

TEST_F(TuningTest, CompareRunsEveryStrategySideBySide) {
  TuneOptions options = quick_options();
  options.isolate = false;
  CompareResult result = compare(model_, options);
  ASSERT_GE(result.strategies.size(), 2u);
  EXPECT_EQ(result.strategies.front().strategy, "native");
  EXPECT_EQ(result.strategies.back().strategy.rfind("collage", 0), 0U);
  for (const StrategyResult& s : result.strategies) {
    EXPECT_TRUE(s.mismatch.empty()) << s.strategy << ": " << s.mismatch;
    EXPECT_GT(s.median_ms, 0) << s.strategy;
    EXPECT_LE(s.p10_ms, s.p90_ms) << s.strategy;
  }
  EXPECT_TRUE(result.strategies.back().estimated_ms.has_value());
  EXPECT_FALSE(result.best_single.empty());
  EXPECT_EQ(nlohmann::json::parse(result.kept_plan_json)["strategy"], result.kept_strategy);
}

// The backend and nodes of each partition of a plan.
std::vector<std::string> partitions_of(const std::string& plan_json) {
  std::vector<std::string> lines;
  for (const auto& p : nlohmann::json::parse(plan_json)["partitions"]) {
    lines.push_back(p["backend"].get<std::string>() + ":" + p["nodes"].dump());
  }
  return lines;
}

TEST_F(TuningTest, LocalMovesAreMeasuredOnceAndTheirPlanIsReproduced) {
  TuneOptions options = refining_options();
  TuneResult first = tune(model_, options);
  EXPECT_GE(first.search.moves_tried, first.search.moves_kept);
  nlohmann::json plan = nlohmann::json::parse(first.plan_json);
  EXPECT_EQ(plan["search"]["moves_tried"], first.search.moves_tried);
  // The moves started from the searched cover, a single-backend one or the
  // greedy placement.
  std::vector<std::string> starts = {"searched"};
  for (const BackendInfo& backend : backends()) starts.push_back("single:" + backend.name);
  EXPECT_TRUE(std::find(starts.begin(), starts.end(), first.search.moves_start) != starts.end() ||
              first.search.moves_start.rfind("greedy:", 0) == 0)
      << first.search.moves_start;
  EXPECT_EQ(plan["search"]["moves_start"], first.search.moves_start);

  // Tuned again: searched once with the stored overheads, the kept moves
  // applied without measuring them again.
  TuneResult again = tune(model_, options);
  EXPECT_EQ(again.search.moves_tried, 0);
  EXPECT_EQ(partitions_of(again.plan_json), partitions_of(first.plan_json));

  // Without local moves, the searched plan as it is.
  options.search.local_moves = false;
  TuneResult without = tune(model_, options);
  EXPECT_EQ(without.search.moves_tried, 0);
  EXPECT_EQ(without.search.moves_start, "");
}

TEST_F(TuningTest, TheKeptPlansChargesAreFittedToItsRunsAndStoredWithTheModel) {
  TuneOptions options = refining_options();
  // One search (each one fits the charges of its own plan, in its layout).
  options.search.layout = "own";
  std::vector<std::string> fitted;
  std::vector<std::string> timed_again;
  options.progress = [&](const TuneProgress& p) {
    if (p.message.find("charges fitted to its runs") != std::string::npos) {
      fitted.push_back(p.message);
    }
    if (p.message.find("tuned before: the plan's") != std::string::npos) {
      timed_again.push_back(p.message);
    }
  };
  TuneResult first = tune(model_, options);
  ASSERT_EQ(fitted.size(), 1U);
  EXPECT_NE(fitted.front().find("the kept plan, profiled 5 times"), std::string::npos)
      << fitted.front();
  const double estimated = nlohmann::json::parse(first.plan_json)["estimated_ms"].get<double>();
  EXPECT_GT(estimated, 0);

  EXPECT_TRUE(timed_again.empty());

  // Tuned again: the stored plan and its fitted charges, not fitted again;
  // only its parts are timed again.
  fitted.clear();
  TuneResult again = tune(model_, options);
  EXPECT_TRUE(fitted.empty());
  EXPECT_EQ(timed_again.size(), 1U);
  auto partitions = [](const TuneResult& result) {
    std::vector<std::pair<std::string, std::vector<std::string>>> found;
    for (const auto& partition : nlohmann::json::parse(result.plan_json)["partitions"]) {
      found.emplace_back(partition["backend"].get<std::string>(),
                         partition["nodes"].get<std::vector<std::string>>());
    }
    return found;
  };
  EXPECT_EQ(partitions(again), partitions(first));
  EXPECT_GT(nlohmann::json::parse(again.plan_json)["estimated_ms"].get<double>(), 0);

  // Without refinement nothing is profiled, so nothing is fitted.
  options.search.refine_rounds = 0;
  options.cache_path = "none";
  tune(model_, options);
  EXPECT_TRUE(fitted.empty());
}

TEST_F(TuningTest, BadOptionsAreErrorsNamingTheOption) {
  TuneOptions options = quick_options();
  options.backends = {"nosuch"};
  EXPECT_THROW(tune(model_, options), Error);
  options = quick_options();
  options.search.max_depth = 0;
  try {
    tune(model_, options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--max-depth"), std::string::npos) << e.what();
  }
  options = quick_options();
  options.threads = 100000;
  EXPECT_THROW(tune(model_, options), Error);
  EXPECT_THROW(tune(dir_.file("missing.onnx"), quick_options()), Error);
}

// Placement constraints through the C++ API on a zoo model (SqueezeNet
// 1.1): every MaxPool pinned to XNNPACK, oneDNN kept off the Concats, and
// both honoured by the kept plan, which records them. Skipped without the zoo.
TEST_F(TuningTest, PinsAndAvoidsAreHonouredOnAZooModel) {
  const char* zoo = std::getenv("COLLAGE_ZOO_DIR");
  const std::string model = zoo ? std::string(zoo) + "/squeezenet1_1/model.onnx" : std::string();
  if (model.empty() || !std::ifstream(model)) GTEST_SKIP() << "zoo model squeezenet1_1 absent";
  TuneOptions options = quick_options();
  options.threads = 2;
  options.backends = {"onednn", "xnnpack"};
  options.cache_path = dir_.file("cache.sqlite");
  options.search.local_moves = false;
  options.place = {"op:MaxPool=xnnpack"};
  options.avoid = {"onednn:op:Concat"};
  TuneResult result = tune(model, options);
  nlohmann::json plan = nlohmann::json::parse(result.plan_json);
  EXPECT_EQ(plan["placement"],
            nlohmann::json({"place op:MaxPool=xnnpack", "avoid onednn:op:Concat"}));
  int pools = 0, concats = 0;
  for (const auto& partition : plan["partitions"]) {
    for (const auto& op : partition["ops"]) {
      if (op == "MaxPool") {
        ++pools;
        EXPECT_EQ(partition["backend"], "xnnpack");
      }
      if (op == "Concat") {
        ++concats;
        EXPECT_NE(partition["backend"], "onednn");
      }
    }
  }
  EXPECT_EQ(pools, 3);
  EXPECT_EQ(concats, 8);
  for (const StrategyResult& row : result.measured) EXPECT_EQ(row.mismatch, "") << row.strategy;

  // A pin the backend cannot honour is an Error naming the node.
  options.place = {"op:MaxPool=openblas"};
  options.backends = {"openblas"};
  try {
    tune(model, options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be pinned to openblas"), std::string::npos)
        << e.what();
  }
}

TEST(BackendsTest, ListsNativeFirstWithVersionsAndSupport) {
  std::vector<BackendInfo> list = backends();
  ASSERT_FALSE(list.empty());
  EXPECT_EQ(list.front().name, "native");
  for (const BackendInfo& b : list) {
    EXPECT_FALSE(b.version.empty()) << b.name;
    EXPECT_FALSE(b.support.empty()) << b.name;
    EXPECT_TRUE(b.style == "library" || b.style == "graph" || b.style == "compiler") << b.style;
  }
  EXPECT_STREQ(version(), "0.1.0");
}

}  // namespace
}  // namespace collage
