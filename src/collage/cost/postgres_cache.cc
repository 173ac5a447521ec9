#include "collage/cost/postgres_cache.h"

#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "collage/cost/postgres_connection.h"
#include "collage/ir/error.h"

namespace collage {
namespace {

constexpr const char* kColumns =
    "valid, seconds, p90_seconds, count, reason, transient, backend, backend_version, machine";

class PostgresCache final : public MeasurementCache {
 public:
  PostgresCache(const std::string& url, bool read_only)
      : MeasurementCache(redacted_url(url)), db_(url, read_only, "measurement cache") {}

  PgResult run(const std::string& sql, const std::vector<std::string>& params = {},
               const std::string& action = "query") const {
    return db_.run(sql, params, action);
  }

  std::optional<CachedMeasurement> find(const std::string& key) const override {
    PgResult result =
        run(std::string("SELECT ") + kColumns + " FROM measurements WHERE key = $1", {key}, "read");
    if (result.rows() == 0) return std::nullopt;
    return row(result, 0, 0);
  }

  void store(const std::string& key, const CachedMeasurement& m) override {
    run(measurement_upsert(""), measurement_params(key, m), "store");
  }

  void for_each(const std::function<void(const std::string&, const CachedMeasurement&)>& visit)
      const override {
    PgResult result =
        run(std::string("SELECT key, ") + kColumns + " FROM measurements ORDER BY key", {}, "read");
    for (int i = 0; i < result.rows(); ++i) visit(result.text(i, 0), row(result, i, 1));
  }

  int merge(const std::vector<std::pair<std::string, CachedMeasurement>>& rows) override {
    int stored = 0;
    db_.in_transaction("the import", [&] {
      for (const auto& row : rows) {
        // A valid row already here stays.
        stored += run(measurement_upsert(" WHERE NOT measurements.valid"),
                      measurement_params(row.first, row.second), "import")
                      .affected();
      }
    });
    return stored;
  }

  int size() const override {
    return std::atoi(run("SELECT count(*) FROM measurements", {}, "count").text(0, 0).c_str());
  }

  void check_integrity() const override { run("SELECT 1 FROM measurements LIMIT 1", {}, "read"); }

  CacheStats stats() const override {
    PgResult result =
        run("SELECT backend, machine, valid, transient, count(*) FROM measurements "
            "GROUP BY backend, machine, valid, transient",
            {}, "count rows");
    CacheStats stats;
    for (int i = 0; i < result.rows(); ++i) {
      const int rows = std::atoi(result.text(i, 4).c_str());
      for (CacheStats::Counts* counts :
           {&stats.by_backend[result.text(i, 0)], &stats.by_machine[result.text(i, 1)]}) {
        if (result.flag(i, 2)) {
          counts->valid += rows;
        } else if (result.flag(i, 3)) {
          counts->transient += rows;
        } else {
          counts->invalid += rows;
        }
      }
      stats.rows += rows;
    }
    // A schema of version 1 (read-only) has no jobs.
    if (run("SELECT to_regclass('measurement_jobs') IS NOT NULL", {}, "read the schema")
            .flag(0, 0)) {
      PgResult jobs = run(
          "SELECT CASE WHEN state = 'running' AND lease_until < clock_timestamp() THEN 'lease run "
          "out' ELSE state END, count(*) FROM measurement_jobs GROUP BY 1",
          {}, "count jobs");
      for (int i = 0; i < jobs.rows(); ++i) {
        stats.jobs[jobs.text(i, 0)] = std::atoi(jobs.text(i, 1).c_str());
      }
      stats.job_weight_bytes = std::atoll(
          run("SELECT coalesce(sum(octet_length(data)), 0) FROM job_weights", {}, "count weights")
              .text(0, 0)
              .c_str());
    }
    return stats;
  }

  int clear() override {
    // Jobs are measurements to be: they go with them.
    int rows = 0;
    db_.in_transaction("clearing", [&] {
      rows = run("DELETE FROM measurements", {}, "clear").affected();
      run("DELETE FROM measurement_jobs", {}, "clear");
      run("DELETE FROM job_weights", {}, "clear");
    });
    return rows;
  }

  int prune(const CacheGeneration& current) override {
    // Rows of another machine, or of a backend version this build does not
    // have: decided here, deleted by key in one transaction.
    std::vector<std::string> stale;
    for_each([&](const std::string& key, const CachedMeasurement& m) {
      auto version = current.backend_versions.find(m.backend);
      const bool current_version =
          version != current.backend_versions.end() && version->second == m.backend_version;
      if (m.machine.rfind(current.machine_prefix, 0) != 0 || !current_version) {
        stale.push_back(key);
      }
    });
    db_.in_transaction("pruning", [&] {
      for (const std::string& key : stale) {
        run("DELETE FROM measurements WHERE key = $1", {key}, "prune");
      }
    });
    return static_cast<int>(stale.size());
  }

 private:
  static CachedMeasurement row(const PgResult& result, int i, int first) {
    CachedMeasurement m;
    m.valid = result.flag(i, first);
    m.seconds = std::strtod(result.text(i, first + 1).c_str(), nullptr);
    m.p90_seconds = std::strtod(result.text(i, first + 2).c_str(), nullptr);
    m.count = std::atoi(result.text(i, first + 3).c_str());
    m.reason = result.text(i, first + 4);
    m.transient = result.flag(i, first + 5);
    m.backend = result.text(i, first + 6);
    m.backend_version = result.text(i, first + 7);
    m.machine = result.text(i, first + 8);
    return m;
  }

  PgConnection db_;
};

}  // namespace

std::string measurement_upsert(const std::string& condition) {
  return std::string("INSERT INTO measurements (key, ") + kColumns +
         ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (key) DO UPDATE SET "
         "valid = EXCLUDED.valid, seconds = EXCLUDED.seconds, p90_seconds = "
         "EXCLUDED.p90_seconds, count = EXCLUDED.count, reason = EXCLUDED.reason, transient = "
         "EXCLUDED.transient, backend = EXCLUDED.backend, backend_version = "
         "EXCLUDED.backend_version, machine = EXCLUDED.machine, measured_at = now()" +
         condition;
}

std::vector<std::string> measurement_params(const std::string& key, const CachedMeasurement& m) {
  return {key,
          m.valid ? "true" : "false",
          fmt::format("{:.17g}", m.seconds),
          fmt::format("{:.17g}", m.p90_seconds),
          std::to_string(m.count),
          m.reason,
          m.transient ? "true" : "false",
          m.backend,
          m.backend_version,
          m.machine};
}

std::unique_ptr<MeasurementCache> open_postgres_cache(const std::string& url, bool read_only) {
  return std::make_unique<PostgresCache>(url, read_only);
}

}  // namespace collage
