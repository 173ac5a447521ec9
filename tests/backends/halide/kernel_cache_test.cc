// The on-disk kernel cache: a miss compiles and stores, a hit loads without
// compiling, a stale or corrupt entry is rebuilt, and a compile that fails
// or overruns its budget is a Failure with the reason.
#include "collage/backends/halide/kernel_cache.h"

#include <Halide.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "backends/halide/halide_check.h"
#include "collage/backends/compiles_ahead.h"
#include "collage/backends/halide/schedule.h"
#include "collage/ir/file_io.h"

namespace collage::halide {
namespace {

namespace fs = std::filesystem;

class KernelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "collage-halide-cache-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // out(x) = 2 * in(x) + 1 over 64 floats, with the backend's target.
  static Result<bool> write_doubler(const std::string& object) {
    Halide::ImageParam in(Halide::Float(32), 1, "in");
    Halide::Func out("out");
    Halide::Var x("x");
    out(x) = in(x)*2.0f + 1.0f;
    out.compile_to_object(object, {in}, kKernelFunction, kernel_target());
    return true;
  }

  // Runs the doubler from `library` on 64 floats; true when the result is right.
  static bool doubles(const KernelLibrary& library) {
    std::vector<float> input(64), output(64, 0.0f);
    for (int i = 0; i < 64; ++i) input[i] = static_cast<float>(i);
    halide_dimension_t dim(0, 64, 1);
    halide_buffer_t in{};
    halide_buffer_t out{};
    for (halide_buffer_t* b : {&in, &out}) {
      b->type = halide_type_t(halide_type_float, 32);
      b->dimensions = 1;
      b->dim = &dim;
    }
    in.host = reinterpret_cast<uint8_t*>(input.data());
    out.host = reinterpret_cast<uint8_t*>(output.data());
    void* context = nullptr;
    void* arguments[] = {&context, &in, &out};
    if (library.entry(arguments) != 0) return false;
    for (int i = 0; i < 64; ++i) {
      if (output[i] != 2.0f * static_cast<float>(i) + 1.0f) return false;
    }
    return true;
  }

  std::string dir_;
};

TEST_F(KernelCacheTest, AMissCompilesAndAHitLoads) {
  const KernelCache cache(dir_);
  auto first = cache.load_or_build("key-a", write_doubler, 60);
  ASSERT_TRUE(first.ok()) << first.error();
  EXPECT_FALSE(first->from_cache);
  EXPECT_GT(first->compile_seconds, 0.0);
  EXPECT_TRUE(doubles(*first));
  EXPECT_TRUE(fs::exists(cache.library_path("key-a")));
  EXPECT_TRUE(fs::exists(cache.record_path("key-a")));

  // A writer that fails shows that a hit never compiles.
  auto second = cache.load_or_build(
      "key-a", [](const std::string&) -> Result<bool> { return Failure{"must not compile"}; }, 60);
  ASSERT_TRUE(second.ok()) << second.error();
  EXPECT_TRUE(second->from_cache);
  EXPECT_TRUE(doubles(*second));
}

TEST_F(KernelCacheTest, ACorruptLibraryIsRebuilt) {
  const KernelCache cache(dir_);
  ASSERT_TRUE(cache.load_or_build("key-b", write_doubler, 60).ok());
  {
    std::ofstream garbage(cache.library_path("key-b"), std::ios::binary | std::ios::trunc);
    garbage << "not a shared library";
  }
  auto rebuilt = cache.load_or_build("key-b", write_doubler, 60);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error();
  EXPECT_FALSE(rebuilt->from_cache);
  EXPECT_TRUE(doubles(*rebuilt));
}

TEST_F(KernelCacheTest, AStaleRecordIsRebuilt) {
  const KernelCache cache(dir_);
  ASSERT_TRUE(cache.load_or_build("key-c", write_doubler, 60).ok());
  // A record written for another key (or by another format) at this name.
  std::string record = read_regular_file(cache.record_path("key-c"));
  record.replace(record.find("key-c"), 5, "key-z");
  write_file_atomically(cache.record_path("key-c"), record);
  auto rebuilt = cache.load_or_build("key-c", write_doubler, 60);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error();
  EXPECT_FALSE(rebuilt->from_cache);
  EXPECT_TRUE(doubles(*rebuilt));
  // A missing record is a miss too.
  fs::remove(cache.record_path("key-c"));
  auto again = cache.load_or_build("key-c", write_doubler, 60);
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_FALSE(again->from_cache);
}

TEST_F(KernelCacheTest, AFailedCompileIsAFailureWithItsReason) {
  const KernelCache cache(dir_);
  auto failed = cache.load_or_build(
      "key-d", [](const std::string&) -> Result<bool> { return Failure{"no lowering for Foo"}; },
      60);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().find("no lowering for Foo"), std::string::npos) << failed.error();
  EXPECT_FALSE(fs::exists(cache.library_path("key-d")));
}

TEST_F(KernelCacheTest, ACompileOverItsBudgetIsStopped) {
  const KernelCache cache(dir_);
  const auto start = std::chrono::steady_clock::now();
  auto slow = cache.load_or_build(
      "key-e",
      [](const std::string& object) -> Result<bool> {
        std::this_thread::sleep_for(std::chrono::seconds(30));
        return write_doubler(object);
      },
      0.5);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(slow.ok());
  EXPECT_NE(slow.error().find("budget"), std::string::npos) << slow.error();
  EXPECT_LT(seconds, 20.0);
  EXPECT_FALSE(fs::exists(cache.library_path("key-e")));
}

TEST_F(KernelCacheTest, TheBackendCompilesARegionOnceAndThenLoadsIt) {
  ::setenv("COLLAGE_HALIDE_CACHE", dir_.c_str(), 1);
  testing::OpGraphBuilder b;
  const ValueId x = b.input({1, 4, 6, 6});
  const Graph graph = b.finish(b.node("Relu", {x}, {1, 4, 6, 6}));
  auto count_files = [&] {
    int n = 0;
    for (const auto& entry : fs::directory_iterator(dir_)) n += entry.is_regular_file() ? 1 : 0;
    return n;
  };
  ASSERT_TRUE(testing::halide_backend().compile(graph, CompileOptions{2}).ok());
  EXPECT_EQ(count_files(), 2);  // the library and its record
  fs::path library;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    if (entry.path().extension() == ".so") library = entry.path();
  }
  const auto written = fs::last_write_time(library);
  ASSERT_TRUE(testing::halide_backend().compile(graph, CompileOptions{2}).ok());
  EXPECT_EQ(count_files(), 2);
  EXPECT_EQ(fs::last_write_time(library), written);
  testing::expect_halide_matches(graph);
  ::unsetenv("COLLAGE_HALIDE_CACHE");
}

TEST_F(KernelCacheTest, ParallelBuildsRunSideBySideAndStoreWhatTheyBuilt) {
  const KernelCache cache(dir_);
  // Each build marks that it started, then waits (at most 20 s) until two
  // builds have started: with two at a time, none waits long; one at a
  // time, the first would fail.
  const std::string marks = dir_ + "/marks";
  fs::create_directories(marks);
  auto overlapping_doubler = [marks](const std::string& object) -> Result<bool> {
    std::ofstream(marks + "/" + std::to_string(::getpid())) << "started";
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::distance(fs::directory_iterator(marks), fs::directory_iterator{}) < 2) {
      if (std::chrono::steady_clock::now() > give_up) return Failure{"no other build ran beside"};
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return write_doubler(object);
  };
  int built = 0;
  {
    ParallelBuilds builds(cache, 60, 2);
    for (const char* key : {"key-p1", "key-p2", "key-p3", "key-p4", "key-p1"}) {
      builds.add(key, overlapping_doubler);
    }
    builds.add("key-pf", [](const std::string&) -> Result<bool> { return Failure{"no lowering"}; });
    builds.wait_all();
    built = builds.built();
  }
  EXPECT_EQ(built, 4);
  for (const char* key : {"key-p1", "key-p2", "key-p3", "key-p4"}) {
    EXPECT_TRUE(cache.holds(key)) << key;
    auto loaded = cache.load_or_build(
        key, [](const std::string&) -> Result<bool> { return Failure{"x"}; }, 60);
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    EXPECT_TRUE(loaded->from_cache);
    EXPECT_TRUE(doubles(*loaded));
  }
  // A failed build leaves nothing behind: compile() builds it again and
  // reports why.
  EXPECT_FALSE(cache.holds("key-pf"));
  EXPECT_FALSE(fs::exists(cache.library_path("key-pf")));
  // A stored kernel is not built again.
  ParallelBuilds again(cache, 60, 2);
  again.add("key-p1", overlapping_doubler);
  again.wait_all();
  EXPECT_EQ(again.built(), 0);
}

TEST_F(KernelCacheTest, TheBackendCompilesRegionsAheadAndCompileLoadsThem) {
  ::setenv("COLLAGE_HALIDE_CACHE", dir_.c_str(), 1);
  const Backend& backend = testing::halide_backend();
  const CompilesAhead* ahead = compiles_ahead(backend);
  ASSERT_NE(ahead, nullptr);
  std::vector<Graph> graphs;
  for (const char* op : {"Relu", "Sigmoid", "Relu"}) {
    testing::OpGraphBuilder b;
    const ValueId x = b.input({1, 4, 6, 6});
    graphs.push_back(b.finish(b.node(op, {x}, {1, 4, 6, 6})));
  }
  // The same structure twice is one kernel.
  EXPECT_EQ(ahead->prepare(graphs, CompileOptions{2}), 2U);
  auto libraries = [&] {
    std::map<fs::path, fs::file_time_type> found;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      if (entry.path().extension() == ".so") found[entry.path()] = fs::last_write_time(entry);
    }
    return found;
  };
  const auto before = libraries();
  EXPECT_EQ(before.size(), 2U);
  for (const Graph& graph : graphs) {
    ASSERT_TRUE(backend.compile(graph, CompileOptions{2}).ok());
    testing::expect_halide_matches(graph);
  }
  EXPECT_EQ(libraries(), before);
  EXPECT_EQ(ahead->prepare(graphs, CompileOptions{2}), 0U);
  ::unsetenv("COLLAGE_HALIDE_CACHE");
}

}  // namespace
}  // namespace collage::halide
