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

}  // namespace
}  // namespace collage
