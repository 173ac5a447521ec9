#include "collage/cost/measurement_cache.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "collage/ir/error.h"

namespace collage {
namespace {

std::string temp_cache_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("collage_cache_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::filesystem::remove(path);
  return path.string();
}

CachedMeasurement valid_measurement(double median) {
  return CachedMeasurement{true, median, median * 1.5, 12, ""};
}

TEST(MeasurementCacheTest, StoredMeasurementIsFoundAgain) {
  auto cache = MeasurementCache::in_memory();
  cache->store("k1", valid_measurement(0.002));
  auto found = cache->find("k1");
  ASSERT_TRUE(found.has_value());
  EXPECT_TRUE(found->valid);
  EXPECT_DOUBLE_EQ(found->median_seconds, 0.002);
  EXPECT_DOUBLE_EQ(found->p90_seconds, 0.003);
  EXPECT_EQ(found->count, 12);
  EXPECT_FALSE(cache->find("other").has_value());
}

TEST(MeasurementCacheTest, FailuresAreCachedWithTheirReason) {
  auto cache = MeasurementCache::in_memory();
  cache->store("bad", CachedMeasurement{false, 0, 0, 0, "outputs differ from the reference"});
  auto found = cache->find("bad");
  ASSERT_TRUE(found.has_value());
  EXPECT_FALSE(found->valid);
  EXPECT_EQ(found->reason, "outputs differ from the reference");
}

TEST(MeasurementCacheTest, MeasurementsSurviveReopeningTheFile) {
  std::string path = temp_cache_path("reopen.sqlite");
  {
    auto cache = MeasurementCache::open(path);
    cache->store("a", valid_measurement(1.0));
    cache->store("b", valid_measurement(2.0));
  }
  auto cache = MeasurementCache::open(path);
  EXPECT_EQ(cache->size(), 2);
  EXPECT_DOUBLE_EQ(cache->find("b")->median_seconds, 2.0);
}

TEST(MeasurementCacheTest, StoreReplacesAnEarlierMeasurement) {
  auto cache = MeasurementCache::in_memory();
  cache->store("k", valid_measurement(1.0));
  cache->store("k", valid_measurement(3.0));
  EXPECT_EQ(cache->size(), 1);
  EXPECT_DOUBLE_EQ(cache->find("k")->median_seconds, 3.0);
}

TEST(MeasurementCacheTest, OpeningAFileThatIsNotADatabaseIsAnError) {
  std::string path = temp_cache_path("garbage.sqlite");
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    std::fputs("this is not an sqlite database, just some text that is long enough", f);
    std::fclose(f);
  }
  EXPECT_THROW(MeasurementCache::open(path), Error);
}

TEST(MeasurementCacheTest, KeysSeparateBackendsVersionsAndMachines) {
  std::string base = cache_key("h", "onednn", "2.6.3", "cpu|avx2|t2");
  EXPECT_NE(base, cache_key("h", "xnnpack", "2.6.3", "cpu|avx2|t2"));
  EXPECT_NE(base, cache_key("h", "onednn", "2.7.0", "cpu|avx2|t2"));
  EXPECT_NE(base, cache_key("h", "onednn", "2.6.3", "cpu|avx2|t1"));
  EXPECT_NE(base, cache_key("g", "onednn", "2.6.3", "cpu|avx2|t2"));
}

}  // namespace
}  // namespace collage
