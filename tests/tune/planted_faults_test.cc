// A backend that crashes, hangs, computes wrong numbers or throws costs one
// candidate, never the tuning run.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "collage/cost/measurer.h"
#include "collage/cost/measuring_estimator.h"
#include "collage/onnx/exporter.h"
#include "collage/search/backend_spec.h"
#include "collage/search/collage_partitioner.h"
#include "onnx/temp_dir.h"
#include "tune/planted_backends.h"
#include "tune/tune_models.h"

namespace collage {
namespace {

using testing::Fault;
using testing::PlantedBackends;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class PlantedFaultsTest : public ::testing::Test {
 protected:
  PlantedFaultsTest() : model_path_(dir_.file("relu_add_mul.onnx")) {
    save_onnx(testing::relu_add_mul_model(), model_path_);
    model_ = testing::import_model(model_path_);
  }

  // Short enough for the hanging backend to cost little, long enough for
  // a healthy measurement on a busy machine.
  static MeasureOptions options() {
    MeasureOptions options;
    options.timeout_seconds = 2;
    return options;
  }

  std::vector<std::string> worker_command() const { return {COLLAGE_PLANTED_WORKER, model_path_}; }

  std::vector<NodeId> nodes(const std::vector<std::string>& names) const {
    std::vector<NodeId> ids;
    for (const std::string& name : names) {
      auto id = model_.find_node(name);
      EXPECT_TRUE(id.has_value()) << "the imported model has no node " << name;
      if (id) ids.push_back(*id);
    }
    return ids;
  }

  const Backend& planted(Fault fault) const { return backends_.planted(fault); }

  testing::TempDir dir_;
  std::string model_path_;
  Graph model_;
  PlantedBackends backends_;
};

TEST_F(PlantedFaultsTest, TheWorkerMeasuresAHealthyBackend) {
  WorkerMeasurer measurer(worker_command(), options());
  Cost cost = measurer.measure(model_, nodes({"relu", "add"}), backends_.native());
  EXPECT_TRUE(cost.is_valid()) << cost.reason();
  EXPECT_TRUE(cost.is_measured());
}

TEST_F(PlantedFaultsTest, AKernelThatCrashesIsInvalidAndTheReasonNamesTheSignal) {
  WorkerMeasurer measurer(worker_command(), options());
  Cost cost = measurer.measure(model_, nodes({"relu"}), planted(Fault::kCrash));
  ASSERT_FALSE(cost.is_valid());
  EXPECT_TRUE(contains(cost.reason(), "crashing")) << cost.reason();
  EXPECT_TRUE(contains(cost.reason(), "signal 11")) << cost.reason();
  // A crash may not happen again: a later run measures it anew.
  EXPECT_TRUE(cost.is_transient());
}

TEST_F(PlantedFaultsTest, AKernelThatHangsIsInvalidOnceTheTimeoutPasses) {
  WorkerMeasurer measurer(worker_command(), options());
  auto start = std::chrono::steady_clock::now();
  Cost cost = measurer.measure(model_, nodes({"add"}), planted(Fault::kHang));
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(cost.is_valid());
  EXPECT_TRUE(contains(cost.reason(), "hanging")) << cost.reason();
  EXPECT_TRUE(contains(cost.reason(), "timed out")) << cost.reason();
  EXPECT_GE(elapsed, options().timeout_seconds);
  EXPECT_LT(elapsed, options().timeout_seconds + 10);
  EXPECT_TRUE(cost.is_transient());
}

TEST_F(PlantedFaultsTest, WrongNumbersFromTheWorkerAreInvalidAndSayWhichOutputDiffers) {
  WorkerMeasurer measurer(worker_command(), options());
  Cost cost = measurer.measure(model_, nodes({"mul"}), planted(Fault::kWrongNumbers));
  ASSERT_FALSE(cost.is_valid());
  EXPECT_TRUE(contains(cost.reason(), "differ from the reference")) << cost.reason();
  EXPECT_TRUE(contains(cost.reason(), "mul_out")) << cost.reason();
  // Wrong numbers are the backend's answer: cached for good.
  EXPECT_FALSE(cost.is_transient());
}

TEST_F(PlantedFaultsTest, ACompileThatThrowsIsInvalidWithItsMessage) {
  WorkerMeasurer measurer(worker_command(), options());
  Cost cost = measurer.measure(model_, nodes({"relu"}), planted(Fault::kThrowOnCompile));
  ASSERT_FALSE(cost.is_valid());
  EXPECT_TRUE(contains(cost.reason(), "planted compile failure")) << cost.reason();
}

TEST_F(PlantedFaultsTest, AfterEachFailureTheNextRequestIsServed) {
  WorkerMeasurer measurer(worker_command(), options());
  for (Fault fault : {Fault::kCrash, Fault::kHang, Fault::kWrongNumbers, Fault::kThrowOnCompile}) {
    Cost failed = measurer.measure(model_, nodes({"relu"}), planted(fault));
    EXPECT_FALSE(failed.is_valid()) << testing::fault_backend_name(fault);
    Cost next = measurer.measure(model_, nodes({"relu"}), backends_.native());
    EXPECT_TRUE(next.is_valid()) << "after " << testing::fault_backend_name(fault) << ": "
                                 << next.reason();
  }
  // A fresh worker after the crash and after the hang; the other failures
  // are answered by a live worker.
  EXPECT_EQ(measurer.worker_starts(), 3);
}

TEST_F(PlantedFaultsTest, InProcessWrongNumbersAreInvalid) {
  InProcessMeasurer measurer(backends_.native(), options());
  Cost cost = measurer.measure(model_, nodes({"add", "mul"}), planted(Fault::kWrongNumbers));
  ASSERT_FALSE(cost.is_valid());
  EXPECT_TRUE(contains(cost.reason(), "wrong")) << cost.reason();
  EXPECT_TRUE(contains(cost.reason(), "differ from the reference")) << cost.reason();
}

TEST_F(PlantedFaultsTest, InProcessACompileThatThrowsIsInvalid) {
  InProcessMeasurer measurer(backends_.native(), options());
  Cost cost = measurer.measure(model_, nodes({"add"}), planted(Fault::kThrowOnCompile));
  ASSERT_FALSE(cost.is_valid());
  EXPECT_TRUE(contains(cost.reason(), "planted compile failure")) << cost.reason();
}

TEST_F(PlantedFaultsTest, TheSearchCompletesOnNativeAloneWhenEveryOtherBackendFails) {
  std::vector<PartitionSpecPtr> specs = {make_backend_spec(backends_.native())};
  std::vector<std::string> planted_names;
  for (Fault fault : {Fault::kCrash, Fault::kHang, Fault::kWrongNumbers, Fault::kThrowOnCompile}) {
    specs.push_back(make_backend_spec(planted(fault)));
    planted_names.push_back(testing::fault_backend_name(fault));
  }
  WorkerMeasurer measurer(worker_command(), options());
  MeasuringEstimator estimator(measurer, nullptr, "test machine");
  DataflowGraph dfg(model_);

  CollageResult result = collage_partition(dfg, specs, estimator);

  std::vector<std::string> covered;
  for (const auto& [backend, names] : testing::summarize(dfg, result.search.partitions)) {
    EXPECT_EQ(backend, "native");
    covered.insert(covered.end(), names.begin(), names.end());
  }
  std::sort(covered.begin(), covered.end());
  EXPECT_EQ(covered, testing::sorted_node_names(model_));
  EXPECT_TRUE(result.search.total.is_valid());

  // Every planted backend offered a candidate per node, and each one was
  // measured as invalid for its own reason.
  const std::map<std::string, std::string> expected_reason = {
      {"crashing", "signal 11"},
      {"hanging", "timed out"},
      {"wrong", "differ"},
      {"throwing", "planted compile failure"}};
  int planted_candidates = 0;
  for (const EstimatedCandidate& e : result.candidates) {
    const std::string& spec = e.candidate.spec_name();
    if (spec == "native") continue;
    ++planted_candidates;
    ASSERT_FALSE(e.cost.is_valid()) << e.candidate.to_string();
    EXPECT_TRUE(contains(e.cost.reason(), expected_reason.at(spec)))
        << e.candidate.to_string() << ": " << e.cost.reason();
  }
  EXPECT_EQ(planted_candidates, 4 * 3);
  EXPECT_GE(estimator.counters().invalid, planted_candidates);
  EXPECT_GE(estimator.counters().measured, planted_candidates);
  EXPECT_GE(measurer.worker_starts(), 1 + 3 + 3);
}

}  // namespace
}  // namespace collage
