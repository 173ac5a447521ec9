#include "collage/cost/measurer.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "collage/backends/registry.h"
#include "collage/cost/measuring_estimator.h"

namespace collage {
namespace {

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

TEST(MeasurerTest, ACandidateWithPreferredEdgesIsStillCheckedAndTimed) {
  InProcessMeasurer measurer(*BackendRegistry::global().find("native"), MeasureOptions{});
  for (const Backend* backend : BackendRegistry::global().all()) {
    if (backend->edge_layouts().front() == EdgeLayout::kPlain) continue;
    Cost cost = measurer.measure_partition(relu_graph(false), *backend);
    EXPECT_TRUE(cost.is_valid()) << backend->name() << ": " << cost.reason();
  }
}

}  // namespace
}  // namespace collage
