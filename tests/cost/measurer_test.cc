#include "collage/cost/measurer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "collage/backends/registry.h"
#include "collage/backends/search_layout.h"
#include "collage/cost/measurement_server.h"
#include "collage/cost/measuring_estimator.h"

namespace collage {
namespace {

TEST(MeasurerTest, ATransientFailureCrossesTheWorkerProtocolAsTransient) {
  const Cost transient =
      decode_measure_reply(encode_measure_reply(Cost::transient_invalid("hung")));
  EXPECT_FALSE(transient.is_valid());
  EXPECT_TRUE(transient.is_transient());
  EXPECT_EQ(transient.reason(), "hung");
  const Cost lasting = decode_measure_reply(encode_measure_reply(Cost::invalid("wrong outputs")));
  EXPECT_FALSE(lasting.is_valid());
  EXPECT_FALSE(lasting.is_transient());
}

// A request the worker cannot serve says nothing of the candidate, whose
// measurement the cache keeps under its structure for every model that has
// it: the reply is transient, so a later run measures the candidate.
TEST(MeasurerTest, AWorkerAskedForANodeOrBackendItLacksRepliesWithATransientFailure) {
  Graph model;
  model.opset = 13;
  const ValueId x = model.add_input("x", TensorType{DType::kFloat32, {4}});
  const ValueId y = model.add_value("y", TensorType{DType::kFloat32, {4}});
  model.add_node("Relu", {x}, {y}, {}, "relu");
  model.add_output(y);
  InProcessMeasurer measurer(BackendRegistry::global().native(), MeasureOptions{});
  std::istringstream requests(R"({"nodes":["another model's node"],"backend":"native"})"
                              "\n"
                              R"({"nodes":["relu"],"backend":"no such backend"})"
                              "\n");
  std::FILE* replies = std::tmpfile();
  ASSERT_NE(replies, nullptr);
  serve_measurements(
      model, measurer, [](const std::string& name) { return BackendRegistry::global().find(name); },
      requests, replies);
  std::rewind(replies);
  char line[4096];
  std::vector<Cost> costs;
  while (std::fgets(line, sizeof line, replies) != nullptr) {
    costs.push_back(decode_measure_reply(line));
  }
  std::fclose(replies);
  ASSERT_EQ(costs.size(), 2u);
  for (const Cost& cost : costs) {
    EXPECT_FALSE(cost.is_valid());
    EXPECT_TRUE(cost.is_transient()) << cost.reason();
  }
  EXPECT_NE(costs[0].reason().find("has no node"), std::string::npos) << costs[0].reason();
  EXPECT_NE(costs[1].reason().find("unknown backend"), std::string::npos) << costs[1].reason();
}

// Cache keys used to name only the library's version: a measurement
// outlived a change of our own kernels for that backend.
TEST(MeasurerTest, EveryBackendOfThisBuildPutsItsCodeVersionIntoCacheKeys) {
  for (const Backend* backend : BackendRegistry::global().all()) {
    EXPECT_EQ(backend->code_version().size(), 16u) << backend->name();
    EXPECT_NE(backend_version_key(*backend).find(backend->code_version()), std::string::npos)
        << backend->name();
    EXPECT_NE(backend_version_key(*backend).find(backend->version()), std::string::npos)
        << backend->name();
  }
}

TEST(MeasurerTest, TheMeasurementContextNamesTheProtocolAndTheThreadingEnvironment) {
  MeasureOptions options;
  const char* old = std::getenv("OMP_WAIT_POLICY");
  std::string saved = old ? old : "";
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  std::string passive = measurement_context("cpu|avx|t2", options);
  ::setenv("OMP_WAIT_POLICY", "ACTIVE", 1);
  std::string active = measurement_context("cpu|avx|t2", options);
  if (old) {
    ::setenv("OMP_WAIT_POLICY", saved.c_str(), 1);
  } else {
    ::unsetenv("OMP_WAIT_POLICY");
  }
  EXPECT_EQ(passive.rfind("cpu|avx|t2|", 0), 0u) << passive;
  EXPECT_NE(passive.find("OMP_WAIT_POLICY=PASSIVE"), std::string::npos) << passive;
  EXPECT_NE(passive, active);
  MeasureOptions longer = options;
  longer.timing.budget_seconds *= 2;
  EXPECT_NE(measurement_context("cpu|avx|t2", longer), active);
}

// x[1,16,6,6] -> Relu -> r (4-D, an output), and with `flatten`,
// Flatten -> f (2-D, a second output).
Graph relu_graph(bool flatten) {
  Graph g;
  g.opset = 13;
  const TensorType x_type{DType::kFloat32, {1, 16, 6, 6}};
  ValueId x = g.add_input("x", x_type);
  ValueId r = g.add_value("r", x_type);
  g.add_node("Relu", {x}, {r}, {}, "relu");
  g.add_output(r);
  if (flatten) {
    ValueId f = g.add_value("f", TensorType{DType::kFloat32, {1, 576}});
    g.add_node("Flatten", {r}, {f}, {}, "flat");
    g.add_output(f);
  }
  return g;
}

TEST(MeasurerTest, CandidatesAreTimedWithTheEdgesInTheLayoutTheirBackendComputesIn) {
  Graph graph = relu_graph(true);
  for (const Backend* backend : BackendRegistry::global().all()) {
    CompileOptions options = preferred_edges(graph, *backend, 2);
    EXPECT_EQ(options.threads, 2);
    const EdgeLayout preferred = backend->edge_layouts().front();
    if (preferred == EdgeLayout::kPlain) {
      EXPECT_TRUE(options.input_layouts.empty() && options.output_layouts.empty())
          << backend->name();
      continue;
    }
    EXPECT_EQ(options.input_layouts, std::vector<EdgeLayout>{preferred}) << backend->name();
    // The 2-D output stays plain.
    EXPECT_EQ(options.output_layouts, (std::vector<EdgeLayout>{preferred, EdgeLayout::kPlain}))
        << backend->name();
  }
}

// A plan hands the model's own inputs and outputs over plain, whatever its
// backends compute in: a candidate holding them is timed with them plain,
// and its key says so.
TEST(MeasurerTest, TheModelsOwnInputsAndOutputsAreTimedPlain) {
  // x -> relu -> r (a graph output) -> flat -> f (a graph output, 2-D).
  const Graph model = relu_graph(true);
  const Graph relu = extract_subgraph(model, {0});
  ASSERT_EQ(relu.model_edges, (std::set<std::string>{"x", "r"}));
  // The same Relu between two partitions.
  Graph between = relu;
  between.model_edges.clear();
  const Graph flat = extract_subgraph(model, {1});
  for (const Backend* backend : BackendRegistry::global().all()) {
    CompileOptions options = preferred_edges(relu, *backend, 2);
    EXPECT_TRUE(options.input_layouts.empty() && options.output_layouts.empty()) << backend->name();
    // The key says so only where the edges would have been laid out.
    const CompileOptions unforced = preferred_edges(between, *backend, 2);
    const bool laid_out =
        !unforced.input_layouts.empty() && unforced.input_layouts[0] != EdgeLayout::kPlain;
    EXPECT_EQ(model_edges_context(relu, *backend), laid_out ? "plain=i0,o0" : "")
        << backend->name();
    EXPECT_EQ(model_edges_context(between, *backend), "") << backend->name();
    // f is 2-D: no layout applies.
    EXPECT_EQ(model_edges_context(flat, *backend), "") << backend->name();
  }
  const Backend* onednn = BackendRegistry::global().find("onednn");
  if (onednn == nullptr) return;
  EXPECT_EQ(preferred_edges(between, *onednn, 2).input_layouts,
            std::vector<EdgeLayout>{onednn->edge_layouts().front()});
  InProcessMeasurer measurer(BackendRegistry::global().native(), MeasureOptions{});
  Cost cost = measurer.measure_partition(relu, *onednn);
  EXPECT_TRUE(cost.is_valid()) << cost.reason();
}

TEST(MeasurerTest, ANativeCandidateThatFollowsLayoutsIsTimedWithChannelsLastEdges) {
  const Backend& native = *BackendRegistry::global().find("native");
  CompileOptions follows = preferred_edges(relu_graph(false), native, 2);
  EXPECT_EQ(follows.input_layouts, std::vector<EdgeLayout>{EdgeLayout::kChannelsLast});
  EXPECT_EQ(follows.output_layouts, std::vector<EdgeLayout>{EdgeLayout::kChannelsLast});
  // Flatten reads the 4-D value as plain: the candidate computes plain.
  CompileOptions plain = preferred_edges(relu_graph(true), native, 2);
  EXPECT_TRUE(plain.input_layouts.empty() && plain.output_layouts.empty());
  InProcessMeasurer measurer(native, MeasureOptions{});
  Cost cost = measurer.measure_partition(relu_graph(false), native);
  EXPECT_TRUE(cost.is_valid()) << cost.reason();
}

// A search in a compute layout (backends/search_layout.h): oneDNN's
// candidates compute in it with their edges in it where they fit, native's
// followers take it, and both are measured and cached under another name.
TEST(MeasurerTest, InASearchLayoutCandidatesAreTimedInItAndNamedForIt) {
  const BackendRegistry& registry = BackendRegistry::global();
  const Backend& native = registry.native();
  InSearchLayout native_in(native, EdgeLayout::kBlocked16);
  EXPECT_EQ(native_in.name(), "native");
  EXPECT_EQ(measured_as(native_in), "native@blocked-16");
  EXPECT_EQ(measured_as(native), "native");
  // The follower's 16 channels fit blocked-16.
  CompileOptions follows = preferred_edges(relu_graph(false), native_in, 2);
  EXPECT_EQ(follows.input_layouts, std::vector<EdgeLayout>{EdgeLayout::kBlocked16});
  EXPECT_EQ(follows.output_layouts, std::vector<EdgeLayout>{EdgeLayout::kBlocked16});
  // Those of 8 do not: channels-last.
  InSearchLayout native_in_8(native, EdgeLayout::kBlocked8);
  EXPECT_EQ(preferred_edges(relu_graph(false), native_in_8, 2).input_layouts,
            std::vector<EdgeLayout>{EdgeLayout::kBlocked8});
  InProcessMeasurer measurer(native, MeasureOptions{});
  Cost cost = measurer.measure_partition(relu_graph(false), native_in);
  EXPECT_TRUE(cost.is_valid()) << cost.reason();
  // A measuring worker finds the wrapped backend by that name; a name it
  // cannot have is nobody's.
  const Backend* found = registry.find_measured("native@blocked-16");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->search_layout(), EdgeLayout::kBlocked16);
  EXPECT_EQ(registry.find_measured("native@blocked-16"), found);
  EXPECT_EQ(registry.find_measured("native"), &native);
  EXPECT_EQ(registry.find_measured("native@diagonal"), nullptr);
  EXPECT_EQ(registry.find_measured("nobody@blocked-16"), nullptr);

  const Backend* onednn = registry.find("onednn");
  if (onednn == nullptr || onednn->compute_layouts().empty()) return;
  const EdgeLayout other = onednn->compute_layouts().front();
  InSearchLayout onednn_in(*onednn, other);
  EXPECT_EQ(onednn_in.edge_layouts().front(), other);
  EXPECT_EQ(onednn_in.edge_layouts().size(), onednn->edge_layouts().size());
  EXPECT_EQ(timed_edge_layout(onednn_in, TensorType{DType::kFloat32, {1, 16, 6, 6}}), other);
  // Where the search's layout is a block that does not divide the channels
  // (nChw16c on AVX-512; nhwc on AVX2 fits any): the backend's own layouts,
  // in its order.
  const TensorType three{DType::kFloat32, {1, 3, 6, 6}};
  EXPECT_EQ(timed_edge_layout(onednn_in, three),
            edge_layout_fits(other, three) ? other : timed_edge_layout(*onednn, three));
  Cost in_layout = measurer.measure_partition(relu_graph(false), onednn_in);
  EXPECT_TRUE(in_layout.is_valid()) << in_layout.reason();
  // XNNPACK computes in one layout only: a search does not wrap it.
  if (const Backend* xnnpack = registry.find("xnnpack")) {
    EXPECT_FALSE(searched_in_layout(*xnnpack, other));
  }
  EXPECT_TRUE(searched_in_layout(*onednn, other));
}

TEST(MeasurerTest, ACandidateWithPreferredEdgesIsStillCheckedAndTimed) {
  InProcessMeasurer measurer(*BackendRegistry::global().find("native"), MeasureOptions{});
  for (const Backend* backend : BackendRegistry::global().all()) {
    if (backend->edge_layouts().front() == EdgeLayout::kPlain) continue;
    Cost cost = measurer.measure_partition(relu_graph(false), *backend);
    EXPECT_TRUE(cost.is_valid()) << backend->name() << ": " << cost.reason();
  }
}

// Compiles with the native backend and logs, per run, which compiled
// kernel ran and into which output buffer.
class LoggingBackend : public Backend {
 public:
  struct Call {
    int kernel;
    const void* output;
  };
  explicit LoggingBackend(const Backend& inner) : inner_(inner) {}
  std::string name() const override { return "logging"; }
  std::string version() const override { return "test"; }
  BackendStyle style() const override { return BackendStyle::kGraph; }
  bool supports(const Graph&, const Node&) const override { return true; }
  std::string describe_support() const override { return "what native runs"; }
  Result<std::unique_ptr<Kernel>> compile(const Graph& partition,
                                          const CompileOptions& options) const override {
    auto kernel = inner_.compile(partition, options);
    if (!kernel) return Failure{kernel.error()};
    return std::unique_ptr<Kernel>(
        std::make_unique<Logged>(std::move(kernel.value()), compiled_++, calls_));
  }
  int compiled() const { return compiled_; }
  const std::vector<Call>& calls() const { return *calls_; }

 private:
  class Logged : public Kernel {
   public:
    Logged(std::unique_ptr<Kernel> inner, int id, std::shared_ptr<std::vector<Call>> calls)
        : inner_(std::move(inner)), id_(id), calls_(std::move(calls)) {}
    void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
      calls_->push_back(Call{id_, outputs[0].raw()});
      inner_->run(inputs, outputs);
    }

   private:
    std::unique_ptr<Kernel> inner_;
    int id_;
    std::shared_ptr<std::vector<Call>> calls_;
  };
  const Backend& inner_;
  mutable int compiled_ = 0;
  std::shared_ptr<std::vector<Call>> calls_ = std::make_shared<std::vector<Call>>();
};

TEST(MeasurerTest, InAPlansCachesEachTimedCallFollowsARunOfATwinOnItsOwnBuffers) {
  const Backend& native = *BackendRegistry::global().find("native");
  MeasureOptions options;
  options.timing.max_samples = 6;
  LoggingBackend backend(native);
  InProcessMeasurer measurer(native, options);
  Cost cost = measurer.measure_partition(relu_graph(false), backend, std::size_t{1} << 20);
  ASSERT_TRUE(cost.is_valid()) << cost.reason();
  // Checked, then timed by a kernel of its own, with a twin compiled beside it.
  ASSERT_EQ(backend.compiled(), 2);
  const std::vector<LoggingBackend::Call>& calls = backend.calls();
  ASSERT_GE(calls.size(), 3u);
  EXPECT_EQ(calls[0].kernel, 0);
  // After the check, the twin (kernel 1) and the timed kernel (0) take turns,
  // the twin first, each on its own output.
  std::size_t timed = 0;
  for (std::size_t i = 1; i < calls.size(); i += 2) {
    EXPECT_EQ(calls[i].kernel, 1) << i;
    ASSERT_LT(i + 1, calls.size());
    EXPECT_EQ(calls[i + 1].kernel, 0) << i;
    EXPECT_NE(calls[i].output, calls[i + 1].output) << i;
    ++timed;
  }
  EXPECT_GE(timed, static_cast<std::size_t>(options.timing.min_samples));

  // Without the twin, only the checked kernel runs; the context says which.
  MeasureOptions alone = options;
  alone.twin_before = false;
  LoggingBackend plain(native);
  InProcessMeasurer without(native, alone);
  ASSERT_TRUE(without.measure_partition(relu_graph(false), plain, std::size_t{1} << 20).is_valid());
  EXPECT_EQ(plain.compiled(), 1);
  for (const LoggingBackend::Call& call : plain.calls()) EXPECT_EQ(call.kernel, 0);
  EXPECT_NE(measurement_context("m", options), measurement_context("m", alone));
}

TEST(MeasurerTest, APartitionTouchingAsMuchAsIsEvictedIsTimedWithoutATwin) {
  const Backend& native = *BackendRegistry::global().find("native");
  MeasureOptions options;
  options.timing.max_samples = 6;
  const Graph relu = relu_graph(false);
  // x and r, 576 floats each.
  ASSERT_EQ(bytes_touched(relu), std::size_t{2 * 576 * 4});
  EXPECT_TRUE(twin_runs_before(relu, bytes_touched(relu) + 1));
  EXPECT_FALSE(twin_runs_before(relu, bytes_touched(relu)));

  // Evicting less than the partition touches: compiled for the check and
  // the timing only, every call the timed kernel's.
  LoggingBackend backend(native);
  InProcessMeasurer measurer(native, options);
  ASSERT_TRUE(measurer.measure_partition(relu, backend, bytes_touched(relu) / 2).is_valid());
  EXPECT_EQ(backend.compiled(), 1);
  for (const LoggingBackend::Call& call : backend.calls()) EXPECT_EQ(call.kernel, 0);
}

TEST(MeasurerTest, InfinitiesMustMatchExactlyAndDoNotWidenTheTolerance) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor expected = Tensor::from_vector<float>({-inf, 1.0f, inf, nan}, {4});
  EXPECT_EQ(compare_outputs(expected, expected, 1e-3, 1e-4), std::nullopt);
  // 1.5 against 1.0 is far beyond 1e-3 of the largest finite value.
  Tensor off = Tensor::from_vector<float>({-inf, 1.5f, inf, nan}, {4});
  ASSERT_NE(compare_outputs(off, expected, 1e-3, 1e-4), std::nullopt);
  EXPECT_NE(compare_outputs(off, expected, 1e-3, 1e-4)->find("element 1"), std::string::npos);
  Tensor flipped = Tensor::from_vector<float>({inf, 1.0f, inf, nan}, {4});
  EXPECT_NE(compare_outputs(flipped, expected, 1e-3, 1e-4), std::nullopt);
  Tensor finite = Tensor::from_vector<float>({-1e30f, 1.0f, inf, nan}, {4});
  EXPECT_NE(compare_outputs(finite, expected, 1e-3, 1e-4), std::nullopt);
  Tensor number = Tensor::from_vector<float>({-inf, 1.0f, inf, 0.0f}, {4});
  EXPECT_NE(compare_outputs(number, expected, 1e-3, 1e-4), std::nullopt);
}

TEST(MeasurerTest, EightBitOutputsMayDifferByOneStepAndQuantizedModelsGetAWiderPlanTolerance) {
  const Tensor expected = Tensor::from_vector<std::uint8_t>({0, 100, 255}, {3});
  EXPECT_EQ(
      compare_outputs(Tensor::from_vector<std::uint8_t>({1, 99, 255}, {3}), expected, 1e-3, 1e-4),
      std::nullopt);
  EXPECT_NE(
      compare_outputs(Tensor::from_vector<std::uint8_t>({0, 102, 255}, {3}), expected, 1e-3, 1e-4),
      std::nullopt);
  Graph float_model;
  const ValueId x = float_model.add_input("x", TensorType{DType::kFloat32, {2}});
  const ValueId y = float_model.add_value("y", TensorType{DType::kFloat32, {2}});
  float_model.add_node("Relu", {x}, {y});
  float_model.add_output(y);
  EXPECT_EQ(plan_output_tolerance(float_model).rtol, 1e-3);
  EXPECT_EQ(plan_output_tolerance(float_model).relative_rms, 0.0);
  Graph quantized = float_model;
  const ValueId q = quantized.add_value("q", TensorType{DType::kUInt8, {2}});
  quantized.add_node("QuantizeLinear",
                     {y, quantized.add_constant("s", Tensor::from_vector<float>({0.1f}, {}))}, {q});
  quantized.add_output(q);
  EXPECT_EQ(plan_output_tolerance(quantized).rtol, 2e-2);
  EXPECT_EQ(plan_output_tolerance(quantized).relative_rms, 0.15);
}

TEST(MeasurerTest, ARelativeRmsToleranceAcceptsScatteredStepsButNotAWrongResult) {
  // 100 values; five of them one step of 0.1 off, as accumulated int8
  // rounding leaves a deep quantized network's outputs.
  std::vector<float> values(100);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.3f * i);
  std::vector<float> stepped = values;
  for (std::size_t i = 0; i < stepped.size(); i += 20) stepped[i] += 0.1f;
  const Tensor expected = Tensor::from_vector<float>(values, {100});
  const Tensor scattered = Tensor::from_vector<float>(stepped, {100});
  EXPECT_NE(compare_outputs(scattered, expected, 2e-2, 1e-4), std::nullopt);
  EXPECT_EQ(compare_outputs(scattered, expected, 2e-2, 1e-4, 0.15), std::nullopt);
  // The same values in another order: elementwise and RMS both far off.
  std::vector<float> reversed(values.rbegin(), values.rend());
  const auto wrong =
      compare_outputs(Tensor::from_vector<float>(reversed, {100}), expected, 2e-2, 1e-4, 0.15);
  ASSERT_NE(wrong, std::nullopt);
  EXPECT_NE(wrong->find("RMS difference"), std::string::npos) << *wrong;
  // A NaN where a number belongs is never within an RMS tolerance.
  stepped[3] = std::nanf("");
  EXPECT_NE(compare_outputs(Tensor::from_vector<float>(stepped, {100}), expected, 2e-2, 1e-4, 0.15),
            std::nullopt);
}

}  // namespace
}  // namespace collage
