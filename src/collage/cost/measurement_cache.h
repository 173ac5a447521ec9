// MeasurementCache: measured partition costs that survive the process.
//
// Measuring is the slow part of tuning (seconds per candidate), and the same
// partition recurs: in the next run on the same model, in other models with
// the same blocks (every ResNet has the same bottleneck convolutions), and
// after an interrupted run. The cache is an SQLite database in WAL mode; each
// measurement is committed as soon as it is stored, so a run killed at any
// point keeps every measurement it finished. The key is built by the caller
// from the partition's structural hash, the backend's name and version, and
// the machine fingerprint (see measurement_key(), cost/cache_keys.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace collage {

struct CachedMeasurement {
  // False for a candidate that failed (compile error, wrong results, crash,
  // time-out); `reason` says why. Failures are cached too: retrying a
  // crashing backend on every run would waste the time budget.
  bool valid = false;
  // The cost: for a measurement, the trimmed mean of its samples
  // (runtime/timing.h); for a learned overhead or a conversion, its time.
  double seconds = 0;
  double p90_seconds = 0;
  int count = 0;
  std::string reason;
  // An invalid measurement whose cause may go away (the worker crashed or
  // timed out): kept with its reason, but measured again by a later run.
  bool transient = false;
  // What the measurement was made with, for `collage cache stats` and
  // `prune`: the backend's name, its version key (library and code
  // versions) and the measurement context (machine, threads, protocol).
  std::string backend;
  std::string backend_version;
  std::string machine;

  // A cost that is one number (a learned overhead, a conversion's time):
  // valid, `seconds` as its time and its 90th percentile, one sample.
  static CachedMeasurement of_value(double seconds) {
    CachedMeasurement entry;
    entry.valid = true;
    entry.seconds = seconds;
    entry.p90_seconds = seconds;
    entry.count = 1;
    return entry;
  }
};

// What a cache holds, for `collage cache stats`.
struct CacheStats {
  struct Counts {
    int valid = 0;
    int invalid = 0;
    int transient = 0;
  };
  int rows = 0;
  // By backend name ("" for rows written before backends were recorded).
  std::map<std::string, Counts> by_backend;
  // By measurement context (machine fingerprint, threads, protocol): a
  // machine class; measurements never count for another.
  std::map<std::string, Counts> by_machine;
  // A PostgreSQL cache's measurement jobs (cost/job_queue.h) by state
  // ("queued", "running", "done", "lease run out"), and the bytes of the
  // weights kept for them.
  std::map<std::string, int> jobs;
  std::int64_t job_weight_bytes = 0;
};

// The backends' version keys of this build and the start of this machine's
// measurement contexts: rows made with anything else are stale (prune()).
struct CacheGeneration {
  // Backend name -> backend_version_key().
  std::map<std::string, std::string> backend_versions;
  // Rows whose machine does not begin with this are from another machine.
  std::string machine_prefix;
};

// The cache is an SQLite file (the default, one per user) or a PostgreSQL
// database shared by many tuners (`--cache postgresql://...`,
// cost/postgres_cache.h): the same rows, the same keys.
class MeasurementCache {
 public:
  // Opens a cache: a file (creating it and its parent directories), or a
  // PostgreSQL database for a `postgresql://` or `postgres://` URL (its
  // schema created or upgraded on first use). Throws Error when the cache
  // cannot be opened or is not a cache, when a file is a symbolic link
  // (docs/security.md), and when a database's schema is newer than this
  // build's.
  static std::unique_ptr<MeasurementCache> open(const std::string& path);
  // Opens an existing cache for reading only (`collage cache stats`): works
  // on a file this user cannot write, and changes nothing in it.
  static std::unique_ptr<MeasurementCache> open_read_only(const std::string& path);
  // A cache that lives in memory only (tests, --no-cache).
  static std::unique_ptr<MeasurementCache> in_memory();

  virtual ~MeasurementCache() = default;
  MeasurementCache(const MeasurementCache&) = delete;
  MeasurementCache& operator=(const MeasurementCache&) = delete;

  virtual std::optional<CachedMeasurement> find(const std::string& key) const = 0;
  // Inserts or replaces, committed before it returns.
  virtual void store(const std::string& key, const CachedMeasurement& measurement) = 0;
  // Every row, in key order.
  virtual void for_each(
      const std::function<void(const std::string&, const CachedMeasurement&)>& visit) const = 0;
  // Stores `rows` in one transaction (all or none), keeping each valid row
  // already here for its key (what this cache measured is not replaced by
  // what it is given). Returns how many rows were stored.
  virtual int merge(const std::vector<std::pair<std::string, CachedMeasurement>>& rows) = 0;
  virtual int size() const = 0;
  // The file, or the database's URL without its password: what messages
  // name.
  const std::string& path() const { return path_; }

  // Throws Error naming the cache when it is damaged or unreachable.
  virtual void check_integrity() const = 0;
  virtual CacheStats stats() const = 0;
  // Deletes every row; returns how many there were.
  virtual int clear() = 0;
  // Deletes the rows made with other backend versions (library or code) or
  // on another machine than `current`; returns how many.
  virtual int prune(const CacheGeneration& current) = 0;

 protected:
  explicit MeasurementCache(std::string path) : path_(std::move(path)) {}

 private:
  std::string path_;
};

// Whether `path` names a PostgreSQL database ("postgresql://", "postgres://").
bool is_cache_url(const std::string& path);

// $COLLAGE_CACHE_URL when set (a shared database), else
// measurements.sqlite in cache_directory() (ir/file_io.h).
std::string default_cache_path();

}  // namespace collage
