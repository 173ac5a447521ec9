#include "collage/cost/postgres_cache.h"

#include <fmt/format.h>
#include <libpq-fe.h>

#include <cstdlib>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "collage/ir/error.h"

namespace collage {
namespace {

// Migrations, in order: migration i takes the schema from version i to i+1.
constexpr const char* kMigrations[] = {
    "CREATE TABLE measurements ("
    "  key TEXT PRIMARY KEY,"
    "  valid BOOLEAN NOT NULL,"
    "  seconds DOUBLE PRECISION NOT NULL,"
    "  p90_seconds DOUBLE PRECISION NOT NULL,"
    "  count INTEGER NOT NULL,"
    "  reason TEXT NOT NULL,"
    "  transient BOOLEAN NOT NULL DEFAULT FALSE,"
    "  backend TEXT NOT NULL DEFAULT '',"
    "  backend_version TEXT NOT NULL DEFAULT '',"
    "  machine TEXT NOT NULL DEFAULT '',"
    "  measured_at TIMESTAMPTZ NOT NULL DEFAULT now())",
};
static_assert(std::size(kMigrations) == kPostgresSchemaVersion);

// Held while the schema is checked and migrated: one key for Collage.
constexpr const char* kSchemaLockKey = "727001";

constexpr const char* kColumns =
    "valid, seconds, p90_seconds, count, reason, transient, backend, backend_version, machine";

// A query's result, cleared when it goes.
class Result {
 public:
  explicit Result(PGresult* result) : result_(result) {}
  ~Result() { PQclear(result_); }
  Result(Result&& other) noexcept : result_(std::exchange(other.result_, nullptr)) {}
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  Result& operator=(Result&&) = delete;
  PGresult* get() const { return result_; }
  int rows() const { return PQntuples(result_); }
  std::string text(int row, int column) const { return PQgetvalue(result_, row, column); }
  bool flag(int row, int column) const { return text(row, column) == "t"; }

 private:
  PGresult* result_;
};

class PostgresCache final : public MeasurementCache {
 public:
  PostgresCache(PGconn* connection, std::string name)
      : MeasurementCache(std::move(name)), connection_(connection) {}
  ~PostgresCache() override { PQfinish(connection_); }

  // Runs `sql` with `params` (text); Error naming the cache on failure.
  Result run(const std::string& sql, const std::vector<std::string>& params = {},
             const std::string& what = "query") const {
    std::vector<const char*> values;
    for (const std::string& p : params) values.push_back(p.c_str());
    Result result(PQexecParams(connection_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                               values.data(), nullptr, nullptr, 0));
    const ExecStatusType status = PQresultStatus(result.get());
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      throw Error(fmt::format("measurement cache: cannot {}: {}", what, message()),
                  {.file = path()});
    }
    return result;
  }

  // libpq's last message, on one line.
  std::string message() const {
    std::string text = PQerrorMessage(connection_);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    std::string line;
    for (char c : text) {
      const bool space = c == '\n' || c == '\t';
      if (space && !line.empty() && line.back() == ' ') continue;
      line += space ? ' ' : c;
    }
    text = line;
    return text.empty() ? "the server did not answer" : escape_control(text);
  }

  // Runs `body` in one transaction ("what" names it in errors): committed
  // when it returns, rolled back when it throws.
  template <typename Body>
  void in_transaction(const std::string& what, Body body) const {
    run("BEGIN", {}, "start " + what);
    try {
      body();
      run("COMMIT", {}, "commit " + what);
    } catch (...) {
      PQclear(PQexec(connection_, "ROLLBACK"));
      throw;
    }
  }

  void migrate() {
    in_transaction("the schema check", [&] {
      run(std::string("SELECT pg_advisory_xact_lock(") + kSchemaLockKey + ")", {},
          "lock the schema");
      run("CREATE TABLE IF NOT EXISTS collage_schema (version INTEGER NOT NULL)", {},
          "create the schema table");
      int version = schema_version();
      check_version(version);
      for (; version < kPostgresSchemaVersion; ++version) {
        run(kMigrations[version], {}, "migrate the schema");
        run("INSERT INTO collage_schema (version) VALUES ($1)", {std::to_string(version + 1)},
            "record the schema version");
      }
    });
  }

  void check_read_only() {
    Result exists = run("SELECT to_regclass('collage_schema') IS NOT NULL", {}, "read the schema");
    if (!exists.flag(0, 0)) {
      throw Error("no measurement cache in this database (a tune creates one)", {.file = path()});
    }
    check_version(schema_version());
  }

  std::optional<CachedMeasurement> find(const std::string& key) const override {
    Result result =
        run(std::string("SELECT ") + kColumns + " FROM measurements WHERE key = $1", {key}, "read");
    if (result.rows() == 0) return std::nullopt;
    return row(result, 0, 0);
  }

  void store(const std::string& key, const CachedMeasurement& m) override {
    run(upsert(""), params(key, m), "store");
  }

  void for_each(const std::function<void(const std::string&, const CachedMeasurement&)>& visit)
      const override {
    Result result =
        run(std::string("SELECT key, ") + kColumns + " FROM measurements ORDER BY key", {}, "read");
    for (int i = 0; i < result.rows(); ++i) visit(result.text(i, 0), row(result, i, 1));
  }

  int merge(const std::vector<std::pair<std::string, CachedMeasurement>>& rows) override {
    int stored = 0;
    in_transaction("the import", [&] {
      for (const auto& row : rows) {
        // A valid row already here stays.
        Result result =
            run(upsert(" WHERE NOT measurements.valid"), params(row.first, row.second), "import");
        stored += std::atoi(PQcmdTuples(result.get()));
      }
    });
    return stored;
  }

  int size() const override {
    return std::atoi(run("SELECT count(*) FROM measurements", {}, "count").text(0, 0).c_str());
  }

  void check_integrity() const override { run("SELECT 1 FROM measurements LIMIT 1", {}, "read"); }

  CacheStats stats() const override {
    Result result =
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
    return stats;
  }

  int clear() override {
    return std::atoi(PQcmdTuples(run("DELETE FROM measurements", {}, "clear").get()));
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
    in_transaction("pruning", [&] {
      for (const std::string& key : stale) {
        run("DELETE FROM measurements WHERE key = $1", {key}, "prune");
      }
    });
    return static_cast<int>(stale.size());
  }

 private:
  int schema_version() const {
    Result result =
        run("SELECT coalesce(max(version), 0) FROM collage_schema", {}, "read the schema version");
    return std::atoi(result.text(0, 0).c_str());
  }

  void check_version(int version) const {
    if (version > kPostgresSchemaVersion) {
      throw Error(fmt::format("the database's cache schema is version {}; this collage knows "
                              "versions up to {}: use a newer collage with it",
                              version, kPostgresSchemaVersion),
                  {.file = path()});
    }
  }

  static std::string upsert(const std::string& condition) {
    return std::string("INSERT INTO measurements (key, ") + kColumns +
           ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (key) DO UPDATE SET "
           "valid = EXCLUDED.valid, seconds = EXCLUDED.seconds, p90_seconds = "
           "EXCLUDED.p90_seconds, count = EXCLUDED.count, reason = EXCLUDED.reason, transient = "
           "EXCLUDED.transient, backend = EXCLUDED.backend, backend_version = "
           "EXCLUDED.backend_version, machine = EXCLUDED.machine, measured_at = now()" +
           condition;
  }

  static std::vector<std::string> params(const std::string& key, const CachedMeasurement& m) {
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

  static CachedMeasurement row(const Result& result, int i, int first) {
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

  PGconn* connection_;
};

}  // namespace

std::string redacted_url(const std::string& url) {
  std::string out = url;
  // scheme://user:password@host...
  const auto scheme = out.find("://");
  if (scheme != std::string::npos) {
    const auto start = scheme + 3;
    const auto at = out.find('@', start);
    const auto slash = out.find('/', start);
    if (at != std::string::npos && (slash == std::string::npos || at < slash)) {
      const auto colon = out.find(':', start);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // ...?password=secret&...
  for (std::size_t p = out.find("password="); p != std::string::npos;
       p = out.find("password=", p + 1)) {
    const auto value = p + 9;
    const auto end = out.find('&', value);
    out.replace(value, (end == std::string::npos ? out.size() : end) - value, "***");
  }
  return out;
}

std::unique_ptr<MeasurementCache> open_postgres_cache(const std::string& url, bool read_only) {
  const std::string name = redacted_url(url);
  PGconn* connection = PQconnectdb(url.c_str());
  if (connection == nullptr) throw Error("cannot connect: out of memory", {.file = name});
  auto cache = std::make_unique<PostgresCache>(connection, name);
  if (PQstatus(connection) != CONNECTION_OK) {
    throw Error("cannot connect to the measurement cache: " + cache->message(), {.file = name});
  }
  // Notices (CREATE TABLE IF NOT EXISTS of a table that exists) stay quiet.
  PQsetNoticeProcessor(
      connection, [](void*, const char*) {}, nullptr);
  if (read_only) {
    cache->check_read_only();
  } else {
    cache->migrate();
  }
  return cache;
}

}  // namespace collage
