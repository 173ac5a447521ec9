// Measurement jobs in PostgreSQL: how a fleet of `collage worker` processes
// measures the candidates of tuners on other machines.
//
// A tuner posts a job per candidate it lacks a measurement of: the
// measurement's cache key, the partition as an ONNX model with its weights,
// the backend and its version, the threads and how much to evict before
// each timed call; a worker needs nothing else. A worker claims the oldest
// job of its machine class (SELECT ... FOR UPDATE SKIP LOCKED: two workers
// never claim one job), under a lease it renews while it measures; a worker
// that dies stops renewing, and once the lease has run out another claims
// the job again. Finishing stores the measurement in the measurement cache's
// table and marks the job done in one transaction, and only while the
// worker still holds the job: a result is stored once. Jobs are keyed by the
// measurement key, so two tuners that need one candidate share one job.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/cost/measurement_cache.h"
#include "collage/cost/postgres_connection.h"

namespace collage {

struct MeasurementJob {
  // The measurement's cache key (cost/cache_keys.h).
  std::string key;
  // The measurement context without the graph optimization level
  // (measurement_context()): a worker measures only the jobs of its own.
  std::string machine_class;
  // The context stored with the measurement (CachedMeasurement::machine).
  std::string machine;
  std::string backend;
  // backend_version_key() of the tuner's backend: a worker whose backend
  // has another version does not take the job.
  std::string backend_version;
  int threads = 1;
  std::int64_t evict_bytes = 0;
  // The partition as an ONNX model; its large weights are external data,
  // files named in `weights` and kept in the database beside the jobs.
  std::string partition;
  std::vector<std::string> weights;
  // Claims so far, this one included.
  int attempts = 0;
};

// What became of a set of jobs, for a tuner's progress line.
struct JobCounts {
  int queued = 0;
  int running = 0;
  int done = 0;
  // Worker name -> jobs it is measuring now / has finished.
  std::map<std::string, int> running_by_worker;
  std::map<std::string, int> done_by_worker;
};

class JobQueue {
 public:
  // A job claimed this many times without being finished is given up: its
  // measurement is stored as a transient failure saying so.
  static constexpr int kMaxAttempts = 3;

  // Connects to `url` (creating or upgrading the schema); `worker` is the
  // name claims are made under. Throws Error as PgConnection does.
  JobQueue(const std::string& url, std::string worker);

  const std::string& name() const { return db_.name(); }
  const std::string& worker() const { return worker_; }

  // Posts `jobs` with the weights they name that are not in the database
  // yet (`weights`: name -> bytes), in one transaction. A key already
  // queued or running stays as it is (another tuner posted it); a finished
  // one is queued again only when the cache holds no lasting measurement of
  // it (none, or a transient failure). Returns how many jobs were queued.
  int post(const std::vector<MeasurementJob>& jobs,
           const std::vector<std::pair<std::string, std::string_view>>& weights,
           const std::string& posted_by);

  // The bytes of a weight file; nullopt when the database no longer has it.
  std::optional<std::string> weight(const std::string& name) const;

  // Deletes the weights no unfinished job names; returns how many.
  int collect_weights();

  // Claims the oldest job of `machine_class` that is queued, or running
  // under a lease that has run out, whose backend is one of `versions`
  // (name -> backend_version_key()) with that version; with
  // `watched_only`, only one of the keys watch() named. The job is this
  // worker's for `lease_seconds`. nullopt when there is none.
  std::optional<MeasurementJob> claim(const std::string& machine_class,
                                      const std::map<std::string, std::string>& versions,
                                      double lease_seconds, bool watched_only = false);

  // Extends this worker's lease on `key`; false when it no longer holds it.
  bool renew(const std::string& key, double lease_seconds);

  // Stores `result` as the measurement of `job` and marks the job done, if
  // this worker still holds it; false (nothing stored) when it does not.
  bool finish(const MeasurementJob& job, const CachedMeasurement& result);

  // The jobs counts() and claim(watched_only) look at from now on (a
  // temporary table of this connection: polling sends no keys).
  void watch(const std::vector<std::string>& keys);
  // The states of the watched jobs.
  JobCounts counts() const;

 private:
  // Jobs claimed kMaxAttempts times whose lease ran out: done, with a
  // transient failure as their measurement.
  void give_up_abandoned();

  PgConnection db_;
  std::string worker_;
};

}  // namespace collage
