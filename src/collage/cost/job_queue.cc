#include "collage/cost/job_queue.h"

#include <fmt/format.h>

#include <cstdlib>

#include "collage/cost/postgres_cache.h"
#include "collage/ir/error.h"

namespace collage {
namespace {

// Lists travel as one text parameter, split on newlines by the server
// (string_to_array): keys and versions hold no newline.
std::string lines(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) {
    if (item.find('\n') != std::string::npos) {
      throw Error("measurement jobs: a key or version holds a newline");
    }
    if (!text.empty()) text += '\n';
    text += item;
  }
  return text;
}

std::string seconds_text(double seconds) { return fmt::format("{:.3f}", seconds); }

// Held shared while jobs and their weights are posted, alone while unused
// weights are deleted.
constexpr const char* kWeightsLockKey = "727002";

}  // namespace

JobQueue::JobQueue(const std::string& url, std::string worker)
    : db_(url, false, "measurement jobs"), worker_(std::move(worker)) {}

int JobQueue::post(const std::vector<MeasurementJob>& jobs,
                   const std::vector<std::pair<std::string, std::string_view>>& weights,
                   const std::string& posted_by) {
  int queued = 0;
  db_.in_transaction("posting jobs", [&] {
    // Weights are collected only between postings (collect_weights()).
    db_.run(std::string("SELECT pg_advisory_xact_lock_shared(") + kWeightsLockKey + ")", {},
            "lock the weights");
    for (const auto& [name, bytes] : weights) {
      db_.run("INSERT INTO job_weights (name, data) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
              {name, std::string(bytes)}, "post a weight", {false, true});
    }
    for (const MeasurementJob& job : jobs) {
      // A finished job is queued again only when what it stored does not
      // last (a crash, a time-out) or is gone (cleared, pruned).
      PgResult result = db_.run(
          "INSERT INTO measurement_jobs (key, machine_class, machine, backend, backend_version, "
          "threads, evict_bytes, partition, posted_by, weights) VALUES ($1, $2, $3, $4, $5, $6, "
          "$7, $8, $9, $10) ON CONFLICT (key) DO UPDATE SET state = 'queued', worker = '', "
          "lease_until = NULL, attempts = 0, partition = EXCLUDED.partition, weights = "
          "EXCLUDED.weights, posted_by = EXCLUDED.posted_by, "
          "posted_at = clock_timestamp(), finished_at = NULL WHERE measurement_jobs.state = "
          "'done' AND NOT EXISTS (SELECT 1 FROM measurements m WHERE m.key = EXCLUDED.key AND "
          "NOT m.transient)",
          {job.key, job.machine_class, job.machine, job.backend, job.backend_version,
           std::to_string(job.threads), std::to_string(job.evict_bytes), job.partition, posted_by,
           lines(job.weights)},
          "post a job", {false, false, false, false, false, false, false, true, false});
      queued += result.affected();
    }
  });
  return queued;
}

void JobQueue::give_up_abandoned() {
  db_.in_transaction("giving up abandoned jobs", [&] {
    PgResult abandoned = db_.run(
        "UPDATE measurement_jobs SET state = 'done', finished_at = clock_timestamp(), partition "
        "= ''::bytea WHERE state = 'running' AND lease_until < clock_timestamp() AND attempts >= "
        "$1 RETURNING key, backend, backend_version, machine, attempts",
        {std::to_string(kMaxAttempts)}, "give up abandoned jobs");
    for (int i = 0; i < abandoned.rows(); ++i) {
      CachedMeasurement m;
      m.valid = false;
      m.transient = true;
      m.reason = fmt::format("{}: claimed {} times by workers that stopped before finishing it",
                             abandoned.text(i, 1), abandoned.text(i, 4));
      m.backend = abandoned.text(i, 1);
      m.backend_version = abandoned.text(i, 2);
      m.machine = abandoned.text(i, 3);
      db_.run(measurement_upsert(""), measurement_params(abandoned.text(i, 0), m),
              "store a given-up job");
    }
  });
}

std::optional<MeasurementJob> JobQueue::claim(const std::string& machine_class,
                                              const std::map<std::string, std::string>& versions,
                                              double lease_seconds, bool watched_only) {
  give_up_abandoned();
  std::vector<std::string> backends;
  for (const auto& [name, version] : versions) backends.push_back(name + "=" + version);
  PgResult claimed = db_.run(
      std::string("UPDATE measurement_jobs SET state = 'running', worker = $1, lease_until = "
                  "clock_timestamp() + make_interval(secs => $2::double precision), attempts = "
                  "attempts + 1 WHERE key = (SELECT key FROM measurement_jobs WHERE "
                  "machine_class = $3 AND (state = 'queued' OR (state = 'running' AND "
                  "lease_until < clock_timestamp())) AND (backend || '=' || backend_version) = "
                  "ANY(string_to_array($4, E'\\n'))") +
          (watched_only ? " AND key IN (SELECT key FROM watched_jobs)" : "") +
          " ORDER BY posted_at, key LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING key, "
          "machine_class, machine, backend, backend_version, threads, evict_bytes, attempts",
      {worker_, seconds_text(lease_seconds), machine_class, lines(backends)}, "claim a job");
  if (claimed.rows() == 0) return std::nullopt;
  MeasurementJob job;
  job.key = claimed.text(0, 0);
  job.machine_class = claimed.text(0, 1);
  job.machine = claimed.text(0, 2);
  job.backend = claimed.text(0, 3);
  job.backend_version = claimed.text(0, 4);
  job.threads = std::atoi(claimed.text(0, 5).c_str());
  job.evict_bytes = std::atoll(claimed.text(0, 6).c_str());
  job.attempts = std::atoi(claimed.text(0, 7).c_str());
  PgResult partition = db_.run("SELECT partition FROM measurement_jobs WHERE key = $1", {job.key},
                               "read a job's partition", {}, true);
  if (partition.rows() == 1) job.partition = partition.bytes(0, 0);
  return job;
}

bool JobQueue::renew(const std::string& key, double lease_seconds) {
  return db_.run(
                "UPDATE measurement_jobs SET lease_until = clock_timestamp() + "
                "make_interval(secs => $3::double precision) WHERE key = $1 AND worker = $2 "
                "AND state = 'running'",
                {key, worker_, seconds_text(lease_seconds)}, "renew a lease")
             .affected() == 1;
}

bool JobQueue::finish(const MeasurementJob& job, const CachedMeasurement& result) {
  bool held = false;
  db_.in_transaction("finishing a job", [&] {
    held = db_.run(
                  "UPDATE measurement_jobs SET state = 'done', finished_at = clock_timestamp(), "
                  "partition = ''::bytea WHERE key = $1 AND worker = $2 AND state = 'running'",
                  {job.key, worker_}, "finish a job")
               .affected() == 1;
    if (held) db_.run(measurement_upsert(""), measurement_params(job.key, result), "store");
  });
  return held;
}

std::optional<std::string> JobQueue::weight(const std::string& name) const {
  PgResult result =
      db_.run("SELECT data FROM job_weights WHERE name = $1", {name}, "read a weight", {}, true);
  if (result.rows() == 0) return std::nullopt;
  return result.bytes(0, 0);
}

int JobQueue::collect_weights() {
  int deleted = 0;
  db_.in_transaction("collecting weights", [&] {
    db_.run(std::string("SELECT pg_advisory_xact_lock(") + kWeightsLockKey + ")", {},
            "lock the weights");
    deleted = db_.run(
                     "DELETE FROM job_weights w WHERE NOT EXISTS (SELECT 1 FROM "
                     "measurement_jobs j WHERE j.state <> 'done' AND w.name = "
                     "ANY(string_to_array(j.weights, E'\\n')))",
                     {}, "delete unused weights")
                  .affected();
  });
  return deleted;
}

void JobQueue::watch(const std::vector<std::string>& keys) {
  db_.in_transaction("watching jobs", [&] {
    db_.run("CREATE TEMPORARY TABLE IF NOT EXISTS watched_jobs (key TEXT PRIMARY KEY)", {},
            "watch jobs");
    db_.run("TRUNCATE watched_jobs", {}, "watch jobs");
    db_.run("INSERT INTO watched_jobs SELECT DISTINCT unnest(string_to_array($1, E'\\n'))",
            {lines(keys)}, "watch jobs");
  });
}

JobCounts JobQueue::counts() const {
  PgResult result = db_.run(
      "SELECT state, worker, lease_until < clock_timestamp(), count(*) FROM measurement_jobs "
      "WHERE key IN (SELECT key FROM watched_jobs) GROUP BY 1, 2, 3",
      {}, "count jobs");
  JobCounts counts;
  for (int i = 0; i < result.rows(); ++i) {
    const std::string state = result.text(i, 0);
    const std::string worker = result.text(i, 1);
    const int n = std::atoi(result.text(i, 3).c_str());
    if (state == "done") {
      counts.done += n;
      counts.done_by_worker[worker] += n;
    } else if (state == "running" && !result.flag(i, 2)) {
      counts.running += n;
      counts.running_by_worker[worker] += n;
    } else {
      // Queued, or held under a lease that ran out: to be claimed.
      counts.queued += n;
    }
  }
  return counts;
}

}  // namespace collage
