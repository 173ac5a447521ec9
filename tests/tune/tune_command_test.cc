// `collage tune` as a user runs it: killed with SIGKILL it loses nothing it
// had committed, runs from a warm cache save the same plan, and a model
// tuned before has its plan's parts timed again.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "collage/backends/registry.h"
#include "collage/cost/measurement_cache.h"
#include "collage/ir/error.h"
#include "collage/onnx/exporter.h"
#include "collage/plan/plan_json.h"
#include "onnx/temp_dir.h"
#include "tune/tune_models.h"

extern char** environ;

namespace collage {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every backend this build has, as a --backends value.
std::string all_backend_names() {
  std::string names;
  for (const std::string& name : BackendRegistry::global().names()) {
    names += (names.empty() ? "" : ",") + name;
  }
  return names;
}

class TuneCommandTest : public ::testing::Test {
 protected:
  TuneCommandTest()
      : model_path_(dir_.file("model.onnx")),
        cache_path_(dir_.file("cache/measurements.sqlite")),
        log_path_(dir_.file("tune.log")) {}

  // `collage tune` of the model into `plan_path`, quietly, without the
  // end-to-end verification.
  std::vector<std::string> tune_args(const std::string& plan_path,
                                     const std::string& backends) const {
    std::vector<std::string> args = {COLLAGE_BINARY_DIR "/collage", "tune", model_path_};
    args.insert(args.end(), {"--backends", backends, "--cache", cache_path_, "-o", plan_path});
    args.insert(args.end(), {"--threads", "1", "--no-verify", "-q"});
    return args;
  }

  // Starts the command with stdout and stderr appended to the log.
  pid_t start(std::vector<std::string> args) const {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path_.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(rc, 0) << "cannot start " << args[0];
    return rc == 0 ? pid : -1;
  }

  // Runs the command to its end; its exit code, or -1 when a signal ended it.
  int run(const std::vector<std::string>& args) const {
    pid_t pid = start(args);
    if (pid < 0) return -1;
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // Tunes to the end and loads the plan it saved.
  Plan tune(const std::string& plan_path, const std::string& backends,
            const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args = tune_args(plan_path, backends);
    args.insert(args.end(), extra.begin(), extra.end());
    int code = run(args);
    EXPECT_EQ(code, 0) << read_text(log_path_);
    return load_plan(plan_path);
  }

  // How many measurements the cache file holds; 0 before it exists.
  int committed_measurements() const {
    if (!fs::exists(cache_path_)) return 0;
    try {
      return MeasurementCache::open(cache_path_)->size();
    } catch (const Error&) {
      return 0;  // created but not yet initialized by the tuner
    }
  }

  testing::TempDir dir_;
  std::string model_path_;
  std::string cache_path_;
  std::string log_path_;
};

// Every node of `graph` is in exactly one partition of `plan`.
void expect_covers_every_node_once(const Plan& plan, const Graph& graph) {
  std::vector<std::string> covered;
  for (const PlanPartition& partition : plan.partitions) {
    covered.insert(covered.end(), partition.nodes.begin(), partition.nodes.end());
  }
  std::sort(covered.begin(), covered.end());
  EXPECT_EQ(covered, testing::sorted_node_names(graph));
}

TEST_F(TuneCommandTest, AKilledTuneResumesFromEveryMeasurementItCommitted) {
  save_onnx(testing::layered_model(16), model_path_);
  const std::string backends = "native";
  // Timed in full: with screening, a warm run may time in full a candidate
  // an earlier run left at its screen (the next test), and the third run
  // below would measure.
  const std::vector<std::string> full = {"--no-screen"};
  std::vector<std::string> killed = tune_args(dir_.file("killed.plan.json"), backends);
  killed.insert(killed.end(), full.begin(), full.end());
  pid_t pid = start(killed);
  ASSERT_GT(pid, 0);

  // Wait until a few measurements are committed, then kill without warning.
  constexpr int kEnough = 5;
  int committed = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  bool ended_early = false;
  while (committed < kEnough && std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) {
      ended_early = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    committed = committed_measurements();
  }
  if (!ended_early) {
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  }
  ASSERT_FALSE(ended_early) << "tuning ended before it could be killed; use a larger model\n"
                            << read_text(log_path_);
  ASSERT_GE(committed, kEnough) << read_text(log_path_);
  EXPECT_FALSE(fs::exists(dir_.file("killed.plan.json")));

  Plan resumed = tune(dir_.file("resumed.plan.json"), backends, full);
  EXPECT_GE(resumed.search.cache_hits, committed);
  EXPECT_GT(resumed.search.candidates, 0);
  expect_covers_every_node_once(resumed, testing::import_model(model_path_));

  // The cache survived the kill intact: a third run has nothing to measure.
  Plan third = tune(dir_.file("third.plan.json"), backends, full);
  EXPECT_EQ(third.search.measured, 0);
  EXPECT_GE(third.search.cache_hits, resumed.search.cache_hits);
}

// Timed in full (--no-screen): with screening, a warm run may time in full
// a candidate the cold run left at its screen, once the parts of the plan,
// timed again, make it a near tie (docs/partitioning.md, "Screening").
TEST_F(TuneCommandTest, TwoRunsFromAWarmCacheSaveIdenticalPartitions) {
  save_onnx(testing::dense_block_then_scale_model(), model_path_);
  const std::string backends = all_backend_names();
  const std::vector<std::string> full = {"--no-screen"};
  tune(dir_.file("cold.plan.json"), backends, full);

  Plan first = tune(dir_.file("first.plan.json"), backends, full);
  Plan second = tune(dir_.file("second.plan.json"), backends, full);
  EXPECT_EQ(first.search.measured, 0);
  EXPECT_EQ(second.search.measured, 0);

  // Measured times are the only fields that may differ by design: the runs
  // end to end, and the estimates (a model tuned before has its plan's
  // parts timed again). So may the runners-up, ranked by those times: the
  // same partitions may be kept from the search in either layout, each of
  // which timed oneDNN's candidates in its own layout.
  auto partitions = [](const std::string& path) {
    json plan = json::parse(read_text(path));
    json result = plan.at("partitions");
    for (json& partition : result) {
      partition.erase("measured_ms");
      partition.erase("estimated_ms");
      partition.erase("alternatives");
    }
    return result;
  };
  json first_partitions = partitions(dir_.file("first.plan.json"));
  json second_partitions = partitions(dir_.file("second.plan.json"));
  ASSERT_FALSE(first_partitions.empty());
  EXPECT_EQ(first_partitions, second_partitions) << first_partitions.dump(1) << "\nversus\n"
                                                 << second_partitions.dump(1);
  expect_covers_every_node_once(first, testing::import_model(model_path_));
}

TEST_F(TuneCommandTest, AModelTunedBeforeHasItsPlansPartsTimedAgain) {
  save_onnx(testing::dense_block_then_scale_model(), model_path_);
  const std::string backends = all_backend_names();
  // Every candidate timed in full: with screening, which candidates the
  // first tune leaves at a short timing depends on the machine's load, and
  // the second tune, its cached times scaled below, may need some in full.
  const std::vector<std::string> no_screen = {"--no-screen"};
  Plan cold = tune(dir_.file("cold.plan.json"), backends, no_screen);
  ASSERT_TRUE(cold.estimated_ms.has_value());
  // A candidate whose measurement failed for a passing reason (a time-out
  // on a loaded machine, a worker crash) is measured again by a later
  // tune: those are the only measurements the second tune may take.
  int transient = 0;
  {
    // A slow spell when the candidates were measured: every measurement a
    // hundred times what the machine runs them at.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(cache_path_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(
                  db, "SELECT COUNT(*) FROM measurements WHERE transient = 1",
                  [](void* count, int, char** values, char**) {
                    *static_cast<int*>(count) = std::atoi(values[0]);
                    return 0;
                  },
                  &transient, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "UPDATE measurements SET seconds = seconds * 100, "
                           "p90_seconds = p90_seconds * 100 WHERE valid = 1 AND backend != ''",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    EXPECT_GT(sqlite3_changes(db), 0);
    sqlite3_close(db);
  }
  Plan again = tune(dir_.file("again.plan.json"), backends, no_screen);
  EXPECT_EQ(again.search.measured, transient);
  ASSERT_TRUE(again.estimated_ms.has_value());
  // Its parts were timed again: the estimate is the machine's as it runs
  // now, not the slow spell's.
  EXPECT_LT(*again.estimated_ms, 10 * *cold.estimated_ms);
  expect_covers_every_node_once(again, testing::import_model(model_path_));
}

// x[1,16,12,12] -> Conv 3x3 -> Relu -> MaxPool 2x2 -> Conv 3x3 -> Relu.
Graph conv_pool_model() {
  Graph graph;
  graph.opset = 13;
  auto f32 = [](Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; };
  ValueId last = graph.add_input("x", f32({1, 16, 12, 12}));
  std::int64_t size = 12;
  auto conv = [&](const std::string& name) {
    std::vector<float> weights(16 * 16 * 9);
    for (std::size_t i = 0; i < weights.size(); ++i) {
      weights[i] = static_cast<float>(i % 11) * 0.02f - 0.1f;
    }
    ValueId w = graph.add_constant(name + "_w", Tensor::from_vector(weights, {16, 16, 3, 3}));
    ValueId y = graph.add_value(name + "_out", f32({1, 16, size, size}));
    Attributes attributes;
    attributes.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
    graph.add_node("Conv", {last, w}, {y}, attributes, name);
    ValueId r = graph.add_value(name + "_relu", f32({1, 16, size, size}));
    graph.add_node("Relu", {y}, {r}, {}, name + "_relu");
    last = r;
  };
  conv("conv1");
  size = 6;
  ValueId pooled = graph.add_value("pooled", f32({1, 16, size, size}));
  Attributes pool;
  pool.set("kernel_shape", std::vector<std::int64_t>{2, 2});
  pool.set("strides", std::vector<std::int64_t>{2, 2});
  graph.add_node("MaxPool", {last}, {pooled}, pool, "pool");
  last = pooled;
  conv("conv2");
  graph.add_output(last);
  return graph;
}

// With --search-layout auto the choice is timed once and kept: a tune from
// the warm cache searches in the same layout and measures nothing.
TEST_F(TuneCommandTest, AnAutoLayoutTuneFromAWarmCacheMeasuresNothing) {
  save_onnx(conv_pool_model(), model_path_);
  const std::vector<std::string> args = {"--no-screen", "--search-layout", "auto"};
  Plan cold = tune(dir_.file("cold.plan.json"), all_backend_names(), args);
  Plan warm = tune(dir_.file("warm.plan.json"), all_backend_names(), args);
  EXPECT_GT(cold.search.measured, 0);
  EXPECT_EQ(warm.search.measured, 0);
  EXPECT_EQ(warm.compute_layouts, cold.compute_layouts);
}

// The search measures in the layout asked for, and the plan computes in it.
TEST_F(TuneCommandTest, APlanSearchedInAComputeLayoutComputesInIt) {
  const Backend* onednn = BackendRegistry::global().find("onednn");
  if (onednn == nullptr || onednn->compute_layouts().empty()) {
    GTEST_SKIP() << "oneDNN computes in no other layout here";
  }
  const std::string other = edge_layout_name(onednn->compute_layouts().front());
  save_onnx(conv_pool_model(), model_path_);
  Plan plan = tune(dir_.file("laid.plan.json"), "onednn", {"--search-layout", other});
  ASSERT_FALSE(plan.partitions.empty());
  bool on_onednn = false;
  for (const PlanPartition& partition : plan.partitions) on_onednn |= partition.backend == "onednn";
  ASSERT_TRUE(on_onednn);
  EXPECT_EQ(plan.compute_layouts.at("onednn"), other);
  // In its own layout the plan names none.
  Plan own = tune(dir_.file("own.plan.json"), "onednn", {"--search-layout", "own"});
  EXPECT_TRUE(own.compute_layouts.empty());
  expect_covers_every_node_once(plan, testing::import_model(model_path_));
}

}  // namespace
}  // namespace collage
