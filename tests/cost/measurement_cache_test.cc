#include "collage/cost/measurement_cache.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "collage/cost/cache_keys.h"
#include "collage/ir/error.h"

namespace collage {
namespace {

std::filesystem::path temp_cache_dir() {
  return std::filesystem::temp_directory_path() /
         ("collage_cache_test_" + std::to_string(::getpid()));
}

// Removes this process's cache directory when the test process exits (the
// forked writers leave by _exit and remove nothing).
struct TempCacheDirRemoval {
  ~TempCacheDirRemoval() {
    std::error_code ignored;
    std::filesystem::remove_all(temp_cache_dir(), ignored);
  }
} temp_cache_dir_removal;

std::string temp_cache_path(const std::string& name) {
  const std::filesystem::path dir = temp_cache_dir();
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
  EXPECT_DOUBLE_EQ(found->seconds, 0.002);
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
  EXPECT_DOUBLE_EQ(cache->find("b")->seconds, 2.0);
}

// Two processes opening a new cache at once used to both add the newer
// columns, and the second one failed ("duplicate column name").
TEST(MeasurementCacheTest, ProcessesOpeningANewCacheAtOnceAllSucceed) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    std::string path = temp_cache_path("concurrent_" + std::to_string(attempt) + ".sqlite");
    std::vector<pid_t> children;
    for (int i = 0; i < 4; ++i) {
      pid_t child = fork();
      if (child == 0) {
        try {
          MeasurementCache::open(path)->store("k" + std::to_string(i), valid_measurement(i + 1));
          _exit(0);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "%s\n", e.what());
          _exit(1);
        }
      }
      children.push_back(child);
    }
    for (pid_t child : children) {
      int status = 0;
      ASSERT_EQ(waitpid(child, &status, 0), child);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "attempt " << attempt;
    }
    EXPECT_EQ(MeasurementCache::open(path)->size(), 4);
  }
}

TEST(MeasurementCacheTest, StoreReplacesAnEarlierMeasurement) {
  auto cache = MeasurementCache::in_memory();
  cache->store("k", valid_measurement(1.0));
  cache->store("k", valid_measurement(3.0));
  EXPECT_EQ(cache->size(), 1);
  EXPECT_DOUBLE_EQ(cache->find("k")->seconds, 3.0);
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
  std::string base = measurement_key("h", "onednn", "2.6.3", "cpu|avx2|t2");
  EXPECT_NE(base, measurement_key("h", "xnnpack", "2.6.3", "cpu|avx2|t2"));
  EXPECT_NE(base, measurement_key("h", "onednn", "2.7.0", "cpu|avx2|t2"));
  EXPECT_NE(base, measurement_key("h", "onednn", "2.6.3", "cpu|avx2|t1"));
  EXPECT_NE(base, measurement_key("g", "onednn", "2.6.3", "cpu|avx2|t2"));
}

TEST(MeasurementCacheTest, ATransientFailureKeepsItsFlagAndProvenance) {
  auto cache = MeasurementCache::in_memory();
  CachedMeasurement crash{false,
                          0,
                          0,
                          0,
                          "worker died of signal 11",
                          true,
                          "onednn",
                          "oneDNN 2.6.3 code abc",
                          "cpu|avx2|t2|protocol"};
  cache->store("k", crash);
  auto found = cache->find("k");
  ASSERT_TRUE(found.has_value());
  EXPECT_TRUE(found->transient);
  EXPECT_EQ(found->reason, "worker died of signal 11");
  EXPECT_EQ(found->backend, "onednn");
  EXPECT_EQ(found->backend_version, "oneDNN 2.6.3 code abc");
}

TEST(MeasurementCacheTest, StatsCountRowsByBackendAndKind) {
  auto cache = MeasurementCache::in_memory();
  cache->store("a", CachedMeasurement{true, 1e-3, 1e-3, 5, "", false, "native", "v", "m"});
  cache->store("b", CachedMeasurement{false, 0, 0, 0, "wrong", false, "native", "v", "m"});
  cache->store("c", CachedMeasurement{false, 0, 0, 0, "crash", true, "xnnpack", "v", "m"});
  CacheStats stats = cache->stats();
  EXPECT_EQ(stats.rows, 3);
  EXPECT_EQ(stats.by_backend["native"].valid, 1);
  EXPECT_EQ(stats.by_backend["native"].invalid, 1);
  EXPECT_EQ(stats.by_backend["xnnpack"].transient, 1);
  EXPECT_EQ(cache->clear(), 3);
  EXPECT_EQ(cache->size(), 0);
}

TEST(MeasurementCacheTest, PruneDeletesRowsOfOtherVersionsAndMachines) {
  auto cache = MeasurementCache::in_memory();
  cache->store("current",
               CachedMeasurement{true, 1, 1, 1, "", false, "native", "v2", "cpu|avx|t1"});
  cache->store("threads",
               CachedMeasurement{true, 1, 1, 1, "", false, "native", "v2", "cpu|avx|t4"});
  cache->store("old code",
               CachedMeasurement{true, 1, 1, 1, "", false, "native", "v1", "cpu|avx|t1"});
  cache->store("gone", CachedMeasurement{true, 1, 1, 1, "", false, "halide", "v2", "cpu|avx|t1"});
  cache->store("elsewhere",
               CachedMeasurement{true, 1, 1, 1, "", false, "native", "v2", "arm|neon|t1"});
  EXPECT_EQ(cache->prune(CacheGeneration{{{"native", "v2"}}, "cpu|avx|"}), 3);
  EXPECT_TRUE(cache->find("current").has_value());
  EXPECT_TRUE(cache->find("threads").has_value());
  EXPECT_FALSE(cache->find("old code").has_value());
}

// A cache file written before the transient and provenance columns existed,
// and while costs were medians, opens: its rows read as deterministic
// results, their cost from the renamed column.
TEST(MeasurementCacheTest, ACacheFromBeforeTheNewColumnsIsUpgraded) {
  std::string path = temp_cache_path("old.sqlite");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_exec(db,
                 "CREATE TABLE measurements (key TEXT PRIMARY KEY, valid INTEGER NOT NULL, "
                 "median_seconds REAL NOT NULL, p90_seconds REAL NOT NULL, count INTEGER NOT "
                 "NULL, reason TEXT NOT NULL, measured_at TEXT NOT NULL DEFAULT "
                 "(datetime('now'))); INSERT INTO measurements VALUES ('k', 0, 0, 0, 0, 'bad', "
                 "'now'); INSERT INTO measurements VALUES ('m', 1, 0.5, 0.6, 7, '', 'now');",
                 nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  auto cache = MeasurementCache::open(path);
  auto found = cache->find("k");
  ASSERT_TRUE(found.has_value());
  EXPECT_FALSE(found->transient);
  EXPECT_EQ(found->reason, "bad");
  auto measured = cache->find("m");
  ASSERT_TRUE(measured.has_value());
  EXPECT_DOUBLE_EQ(measured->seconds, 0.5);
  EXPECT_EQ(measured->count, 7);
}

// Sets environment variables for one test and restores them after.
class ScopedEnvironment {
 public:
  void set(const char* name, const char* value) {
    if (saved_.count(name) == 0) {
      const char* old = std::getenv(name);
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value == nullptr) {
      ::unsetenv(name);
    } else {
      ::setenv(name, value, 1);
    }
  }
  ~ScopedEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

// Without HOME and XDG_CACHE_HOME the cache used to be
// /tmp/collage/measurements.sqlite, where any user could plant rows.
TEST(MeasurementCacheTest, WithoutAHomeTheCacheIsInAPrivateDirectory) {
  std::filesystem::path tmp = std::filesystem::path(temp_cache_path("tmpdir"));
  std::filesystem::create_directories(tmp);
  ScopedEnvironment env;
  env.set("XDG_CACHE_HOME", nullptr);
  env.set("HOME", nullptr);
  env.set("TMPDIR", tmp.c_str());
  std::string path = default_cache_path();
  std::filesystem::path dir = tmp / ("collage-" + std::to_string(::geteuid()));
  EXPECT_EQ(path, (dir / "measurements.sqlite").string());
  struct stat info {};
  ASSERT_EQ(::lstat(dir.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  std::filesystem::remove_all(tmp);
}

TEST(MeasurementCacheTest, APrivateDirectoryOthersCanWriteIsRefused) {
  std::filesystem::path tmp = std::filesystem::path(temp_cache_path("tmpdir_open"));
  std::filesystem::path dir = tmp / ("collage-" + std::to_string(::geteuid()));
  std::filesystem::create_directories(dir);
  ::chmod(dir.c_str(), 0777);
  ScopedEnvironment env;
  env.set("XDG_CACHE_HOME", nullptr);
  env.set("HOME", nullptr);
  env.set("TMPDIR", tmp.c_str());
  EXPECT_THROW(default_cache_path(), Error);
  std::filesystem::remove_all(dir);
  // A symlink planted where the directory would be is refused too.
  std::filesystem::create_directories(tmp / "elsewhere");
  ::chmod((tmp / "elsewhere").c_str(), 0700);
  std::filesystem::create_directory_symlink(tmp / "elsewhere", dir);
  EXPECT_THROW(default_cache_path(), Error);
  std::filesystem::remove_all(tmp);
}

// A symlink planted as the cache file once made a tune create its database
// wherever the link pointed.
TEST(MeasurementCacheTest, ACacheFileThatIsASymlinkIsRefusedAndNothingIsCreatedAtItsTarget) {
  std::filesystem::path dir = std::filesystem::path(temp_cache_path("symlinked_file"));
  std::filesystem::create_directories(dir);
  std::filesystem::path target = dir / "elsewhere.sqlite";
  std::filesystem::create_symlink(target, dir / "measurements.sqlite");
  try {
    MeasurementCache::open((dir / "measurements.sqlite").string());
    ADD_FAILURE() << "a symlinked cache was opened";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("symbolic link"), std::string::npos) << error.what();
  }
  EXPECT_THROW(MeasurementCache::open_read_only((dir / "measurements.sqlite").string()), Error);
  EXPECT_FALSE(std::filesystem::exists(target));
  std::filesystem::remove_all(dir);
}

TEST(MeasurementCacheTest, ACacheDirectoryThatIsASymlinkIsRefused) {
  std::filesystem::path xdg = std::filesystem::path(temp_cache_path("symlinked_dir"));
  std::filesystem::create_directories(xdg / "elsewhere");
  std::filesystem::create_directory_symlink(xdg / "elsewhere", xdg / "collage");
  ScopedEnvironment env;
  env.set("XDG_CACHE_HOME", xdg.c_str());
  try {
    default_cache_path();
    ADD_FAILURE() << "a symlinked cache directory was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("symbolic link"), std::string::npos) << error.what();
  }
  // A real directory, or none yet, is the cache directory as before.
  std::filesystem::remove(xdg / "collage");
  EXPECT_EQ(default_cache_path(), (xdg / "collage" / "measurements.sqlite").string());
  std::filesystem::create_directory(xdg / "collage");
  EXPECT_EQ(default_cache_path(), (xdg / "collage" / "measurements.sqlite").string());
  std::filesystem::remove_all(xdg);
}

// Overwrites `pages` pages of 4096 bytes from the middle of `path` with a
// pattern that is no SQLite page.
void damage_pages_in_the_middle(const std::string& path, int pages) {
  const auto size = static_cast<std::int64_t>(std::filesystem::file_size(path));
  std::FILE* file = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(file, nullptr);
  std::fseek(file, static_cast<long>(size / 2 / 4096 * 4096), SEEK_SET);
  const std::string garbage(4096, '\xa5');
  for (int i = 0; i < pages; ++i) std::fwrite(garbage.data(), 1, garbage.size(), file);
  std::fclose(file);
}

TEST(MeasurementCacheTest, ADamagedCacheFailsItsIntegrityCheckNamingTheFile) {
  const std::string path = temp_cache_path("damaged.sqlite");
  {
    auto cache = MeasurementCache::open(path);
    CachedMeasurement m = CachedMeasurement::of_value(1e-3);
    m.reason = std::string(500, 'r');
    for (int i = 0; i < 2000; ++i) cache->store("key" + std::to_string(i), m);
  }
  MeasurementCache::open_read_only(path)->check_integrity();
  damage_pages_in_the_middle(path, 20);
  auto cache = MeasurementCache::open_read_only(path);
  try {
    cache->check_integrity();
    ADD_FAILURE() << "a damaged cache passed its integrity check";
  } catch (const Error& error) {
    EXPECT_EQ(error.where().file, path);
    EXPECT_NE(error.message().find("damaged"), std::string::npos) << error.what();
  }
}

TEST(MeasurementCacheTest, AReadOnlyOpenChangesNothingInTheFile) {
  const std::string path = temp_cache_path("read_only.sqlite");
  MeasurementCache::open(path)->store("k", CachedMeasurement::of_value(1e-3));
  const auto before = std::filesystem::last_write_time(path);
  auto cache = MeasurementCache::open_read_only(path);
  EXPECT_EQ(cache->stats().rows, 1);
  EXPECT_THROW(cache->store("k2", CachedMeasurement::of_value(1e-3)), Error);
  EXPECT_EQ(std::filesystem::last_write_time(path), before);
}

}  // namespace
}  // namespace collage
