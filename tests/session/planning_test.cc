#include "collage/session/planning.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "collage/backends/registry.h"
#include "collage/ir/error.h"
#include "collage/session/worker_location.h"

namespace collage {
namespace {

std::string field_of(const SearchSettings& settings) {
  try {
    check_search_settings(settings);
  } catch (const Error& e) {
    return e.where().field;
  }
  return "";
}

TEST(SearchSettingsTest, TheDefaultsAreValid) { EXPECT_EQ(field_of(SearchSettings{}), ""); }

TEST(SearchSettingsTest, AValueOutOfRangeIsAnErrorNamingItsFlag) {
  EXPECT_EQ(field_of({.refine_rounds = -1}), "--refine-rounds");
  EXPECT_EQ(field_of({.refine_rounds = 21}), "--refine-rounds");
  EXPECT_EQ(field_of({.budget_seconds = -1}), "--budget");
  EXPECT_EQ(field_of({.max_depth = 0}), "--max-depth");
  EXPECT_EQ(field_of({.max_exits = 17}), "--max-exits");
}

TEST(BackendListTest, AllIsEveryBackendOfThisBuild) {
  EXPECT_EQ(parse_backend_list("all"), BackendRegistry::global().names());
  EXPECT_THROW(parse_backend_list(""), Error);
}

TEST(BackendListTest, ResolvingPutsNativeFirstAndNamesEachBackendOnce) {
  std::vector<const Backend*> backends = resolve_backends({"native", "native"});
  ASSERT_EQ(backends.size(), 1u);
  EXPECT_EQ(backends[0], &BackendRegistry::global().native());
  EXPECT_THROW(resolve_backends({"nosuch"}), Error);
}

TEST(WorkerExecutableTest, COLLAGE_WORKERNamesTheWorker) {
  ::setenv("COLLAGE_WORKER", "/bin/true", 1);
  EXPECT_EQ(worker_executable(), "/bin/true");
  ::setenv("COLLAGE_WORKER", "/nonexistent/collage", 1);
  EXPECT_THROW(worker_executable(), Error);
  ::unsetenv("COLLAGE_WORKER");
}

TEST(WorkerExecutableTest, WithoutTheVariableThisBuildsCollageIsFound) {
  ::unsetenv("COLLAGE_WORKER");
  EXPECT_NE(worker_executable().find("collage"), std::string::npos);
}

// The command-line tool says it serves measurements: a copy of it under
// another name (this test binary stands in for one) measures with itself.
TEST(WorkerExecutableTest, AProcessThatServesMeasurementsIsItsOwnWorkerWhateverItsName) {
  ::unsetenv("COLLAGE_WORKER");
  const std::string self = std::filesystem::canonical("/proc/self/exe").string();
  EXPECT_NE(worker_executable(), self);
  serve_measurements_here();
  EXPECT_EQ(worker_executable(), self);
  serve_measurements_here(false);
  EXPECT_NE(worker_executable(), self);
}

}  // namespace
}  // namespace collage
