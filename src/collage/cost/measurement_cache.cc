#include "collage/cost/measurement_cache.h"

#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "collage/cost/postgres_cache.h"
#include "collage/ir/error.h"
#include "collage/ir/file_io.h"

namespace collage {
namespace {

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS measurements ("
    "  key TEXT PRIMARY KEY,"
    "  valid INTEGER NOT NULL,"
    "  seconds REAL NOT NULL,"
    "  p90_seconds REAL NOT NULL,"
    "  count INTEGER NOT NULL,"
    "  reason TEXT NOT NULL,"
    "  measured_at TEXT NOT NULL DEFAULT (datetime('now')))";

// Columns added after the first release of the schema; a cache file made
// before gets them (with these defaults) when it is opened.
constexpr const char* kAddedColumns[][2] = {
    {"transient", "INTEGER NOT NULL DEFAULT 0"},
    {"backend", "TEXT NOT NULL DEFAULT ''"},
    {"backend_version", "TEXT NOT NULL DEFAULT ''"},
    {"machine", "TEXT NOT NULL DEFAULT ''"},
};

void exec(sqlite3* db, const char* sql, const std::string& path) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) == SQLITE_OK) return;
  std::string text = message != nullptr ? message : "unknown SQLite error";
  sqlite3_free(message);
  throw Error("measurement cache: " + text, {.file = path});
}

// exec(), retried while another connection holds the lock. Setting the
// journal mode of a database that another process is creating can fail at
// once with SQLITE_BUSY, without calling the busy handler.
void exec_when_unlocked(sqlite3* db, const char* sql, const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (true) {
    int status = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
    if (status == SQLITE_OK) return;
    if ((status != SQLITE_BUSY && status != SQLITE_LOCKED) ||
        std::chrono::steady_clock::now() > deadline) {
      exec(db, sql, path);  // reports the error
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// A prepared statement that finalizes itself.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) {
      throw Error(std::string("measurement cache: ") + sqlite3_errmsg(db));
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  sqlite3_stmt* get() { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

// A cache reached through a symbolic link is refused: a link planted in a
// cache directory could make a tune write its database wherever the link
// points. SQLITE_OPEN_NOFOLLOW closes the gap between this check and the open.
void refuse_symlink(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode)) {
    throw Error(
        "refusing the measurement cache: it is a symbolic link; pass the file it "
        "points to with --cache",
        {.file = path});
  }
}

// Opens the database `name` (a path, or a URI with SQLITE_OPEN_URI) of the
// cache file `path`, never through a symbolic link.
sqlite3* open_database(const std::string& path, int flags, const std::string& name = "") {
  sqlite3* db = nullptr;
  const std::string& opened = name.empty() ? path : name;
  if (sqlite3_open_v2(opened.c_str(), &db, flags | SQLITE_OPEN_NOFOLLOW, nullptr) != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : "cannot open";
    sqlite3_close(db);
    throw Error("cannot open the measurement cache: " + message, {.file = path});
  }
  return db;
}

// `path` as the path of an SQLite URI: the characters a URI gives a
// meaning to are percent-encoded.
std::string uri_path(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out;
}

bool has_column(sqlite3* db, const std::string& column) {
  Statement stmt(db, "SELECT 1 FROM pragma_table_info('measurements') WHERE name = ?1");
  sqlite3_bind_text(stmt.get(), 1, column.c_str(), -1, SQLITE_TRANSIENT);
  return sqlite3_step(stmt.get()) == SQLITE_ROW;
}

// Creates or upgrades the table in one write transaction: two processes
// opening a new cache at once (two tunes, or a tune and `collage cache`)
// would otherwise both add the same column, and the second would fail.
void create_schema(sqlite3* db, const std::string& path) {
  exec_when_unlocked(db, "BEGIN IMMEDIATE", path);
  try {
    exec(db, kSchema, path);
    // Costs were medians until they became trimmed means; those rows are
    // keyed by the old protocol, so the column is only renamed.
    if (has_column(db, "median_seconds")) {
      exec(db, "ALTER TABLE measurements RENAME COLUMN median_seconds TO seconds", path);
    }
    for (const auto& [column, definition] : kAddedColumns) {
      if (has_column(db, column)) continue;
      std::string sql =
          std::string("ALTER TABLE measurements ADD COLUMN ") + column + " " + definition;
      exec(db, sql.c_str(), path);
    }
    exec(db, "COMMIT", path);
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

int changes_of(sqlite3* db, const char* sql, const std::string& path) {
  exec(db, sql, path);
  return sqlite3_changes(db);
}

}  // namespace

// The SQLite cache file.
class SqliteCache final : public MeasurementCache {
 public:
  SqliteCache(sqlite3* db, std::string path) : MeasurementCache(std::move(path)), db_(db) {}
  ~SqliteCache() override { sqlite3_close(db_); }

  std::optional<CachedMeasurement> find(const std::string& key) const override;
  void store(const std::string& key, const CachedMeasurement& measurement) override;
  void for_each(const std::function<void(const std::string&, const CachedMeasurement&)>& visit)
      const override;
  int merge(const std::vector<std::pair<std::string, CachedMeasurement>>& rows) override;
  int size() const override;
  void check_integrity() const override;
  CacheStats stats() const override;
  int clear() override;
  int prune(const CacheGeneration& current) override;

 private:
  sqlite3* db_;
};

bool is_cache_url(const std::string& path) {
  return path.rfind("postgresql://", 0) == 0 || path.rfind("postgres://", 0) == 0;
}

std::unique_ptr<MeasurementCache> MeasurementCache::open(const std::string& path) {
  if (is_cache_url(path)) return open_postgres_cache(path, /*read_only=*/false);
  refuse_symlink(path);
  std::error_code ignored;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ignored);
  sqlite3* db = open_database(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  std::unique_ptr<MeasurementCache> cache = std::make_unique<SqliteCache>(db, path);
  // Several tuning runs may share one cache; wait for a writer instead of failing.
  sqlite3_busy_timeout(db, 10000);
  exec_when_unlocked(db, "PRAGMA journal_mode=WAL", path);
  exec(db, "PRAGMA synchronous=NORMAL", path);
  create_schema(db, path);
  return cache;
}

std::unique_ptr<MeasurementCache> MeasurementCache::open_read_only(const std::string& path) {
  if (is_cache_url(path)) return open_postgres_cache(path, /*read_only=*/true);
  refuse_symlink(path);
  sqlite3* db = open_database(path, SQLITE_OPEN_READONLY);
  sqlite3_busy_timeout(db, 10000);
  // A reader of a WAL database needs its shared-memory file; where this
  // user can neither open nor create it, SQLite refuses the first read.
  // The file is then read as immutable: what the last writer checkpointed.
  if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) !=
      SQLITE_OK) {
    sqlite3_close(db);
    db = open_database(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                       "file:" + uri_path(path) + "?immutable=1");
  }
  return std::make_unique<SqliteCache>(db, path);
}

void SqliteCache::check_integrity() const {
  // quick_check reads every page (it skips only the index contents), so
  // pages overwritten anywhere in the file are found.
  Statement stmt(db_, "PRAGMA quick_check");
  std::string verdict;
  int status = sqlite3_step(stmt.get());
  if (status == SQLITE_ROW) {
    const unsigned char* text = sqlite3_column_text(stmt.get(), 0);
    verdict = text != nullptr ? reinterpret_cast<const char*>(text) : "";
  } else {
    verdict = sqlite3_errmsg(db_);
  }
  if (verdict == "ok") return;
  throw Error("the measurement cache is damaged (SQLite: " + quote_untrusted(verdict) +
                  "); delete it, and the next tune measures again",
              {.file = path()});
}

std::unique_ptr<MeasurementCache> MeasurementCache::in_memory() {
  sqlite3* db = nullptr;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) throw Error("cannot create an in-memory cache");
  std::unique_ptr<MeasurementCache> cache = std::make_unique<SqliteCache>(db, ":memory:");
  create_schema(db, ":memory:");
  return cache;
}

std::optional<CachedMeasurement> SqliteCache::find(const std::string& key) const {
  Statement stmt(db_,
                 "SELECT valid, seconds, p90_seconds, count, reason, transient, backend, "
                 "backend_version, machine FROM measurements WHERE key = ?1");
  sqlite3_bind_text(stmt.get(), 1, key.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(stmt.get()) != SQLITE_ROW) return std::nullopt;
  CachedMeasurement m;
  m.valid = sqlite3_column_int(stmt.get(), 0) != 0;
  m.seconds = sqlite3_column_double(stmt.get(), 1);
  m.p90_seconds = sqlite3_column_double(stmt.get(), 2);
  m.count = sqlite3_column_int(stmt.get(), 3);
  const unsigned char* reason = sqlite3_column_text(stmt.get(), 4);
  m.reason = reason != nullptr ? reinterpret_cast<const char*>(reason) : "";
  m.transient = sqlite3_column_int(stmt.get(), 5) != 0;
  auto text = [&](int column) {
    const unsigned char* value = sqlite3_column_text(stmt.get(), column);
    return value != nullptr ? std::string(reinterpret_cast<const char*>(value)) : std::string();
  };
  m.backend = text(6);
  m.backend_version = text(7);
  m.machine = text(8);
  return m;
}

void SqliteCache::store(const std::string& key, const CachedMeasurement& m) {
  Statement stmt(db_,
                 "INSERT OR REPLACE INTO measurements "
                 "(key, valid, seconds, p90_seconds, count, reason, transient, backend, "
                 "backend_version, machine) "
                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  sqlite3_bind_text(stmt.get(), 1, key.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(stmt.get(), 2, m.valid ? 1 : 0);
  sqlite3_bind_double(stmt.get(), 3, m.seconds);
  sqlite3_bind_double(stmt.get(), 4, m.p90_seconds);
  sqlite3_bind_int(stmt.get(), 5, m.count);
  sqlite3_bind_text(stmt.get(), 6, m.reason.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(stmt.get(), 7, m.transient ? 1 : 0);
  sqlite3_bind_text(stmt.get(), 8, m.backend.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(stmt.get(), 9, m.backend_version.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(stmt.get(), 10, m.machine.c_str(), -1, SQLITE_TRANSIENT);
  // Autocommit: the row is durable (in the WAL) when step returns.
  if (sqlite3_step(stmt.get()) != SQLITE_DONE) {
    throw Error(std::string("measurement cache: cannot store: ") + sqlite3_errmsg(db_),
                {.file = path()});
  }
}

void SqliteCache::for_each(
    const std::function<void(const std::string&, const CachedMeasurement&)>& visit) const {
  Statement stmt(db_,
                 "SELECT key, valid, seconds, p90_seconds, count, reason, transient, backend, "
                 "backend_version, machine FROM measurements ORDER BY key");
  auto text = [&](int column) {
    const unsigned char* value = sqlite3_column_text(stmt.get(), column);
    return value != nullptr ? std::string(reinterpret_cast<const char*>(value)) : std::string();
  };
  int status = SQLITE_ROW;
  while ((status = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    CachedMeasurement m;
    m.valid = sqlite3_column_int(stmt.get(), 1) != 0;
    m.seconds = sqlite3_column_double(stmt.get(), 2);
    m.p90_seconds = sqlite3_column_double(stmt.get(), 3);
    m.count = sqlite3_column_int(stmt.get(), 4);
    m.reason = text(5);
    m.transient = sqlite3_column_int(stmt.get(), 6) != 0;
    m.backend = text(7);
    m.backend_version = text(8);
    m.machine = text(9);
    visit(text(0), m);
  }
  if (status != SQLITE_DONE) {
    throw Error(std::string("measurement cache: cannot read rows: ") + sqlite3_errmsg(db_),
                {.file = path()});
  }
}

int SqliteCache::merge(const std::vector<std::pair<std::string, CachedMeasurement>>& rows) {
  exec(db_, "BEGIN IMMEDIATE", path());
  int stored = 0;
  try {
    for (const auto& row : rows) {
      std::optional<CachedMeasurement> here = find(row.first);
      if (here && here->valid) continue;
      store(row.first, row.second);
      ++stored;
    }
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  exec(db_, "COMMIT", path());
  return stored;
}

int SqliteCache::size() const {
  Statement stmt(db_, "SELECT COUNT(*) FROM measurements");
  if (sqlite3_step(stmt.get()) != SQLITE_ROW) return 0;
  return sqlite3_column_int(stmt.get(), 0);
}

CacheStats SqliteCache::stats() const {
  Statement stmt(db_,
                 "SELECT backend, machine, valid, transient, COUNT(*) FROM measurements "
                 "GROUP BY backend, machine, valid, transient");
  CacheStats stats;
  int status = SQLITE_ROW;
  auto text = [&](int column) {
    const unsigned char* value = sqlite3_column_text(stmt.get(), column);
    return value != nullptr ? std::string(reinterpret_cast<const char*>(value)) : std::string();
  };
  while ((status = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    const int rows = sqlite3_column_int(stmt.get(), 4);
    for (CacheStats::Counts* counts : {&stats.by_backend[text(0)], &stats.by_machine[text(1)]}) {
      if (sqlite3_column_int(stmt.get(), 2) != 0) {
        counts->valid += rows;
      } else if (sqlite3_column_int(stmt.get(), 3) != 0) {
        counts->transient += rows;
      } else {
        counts->invalid += rows;
      }
    }
    stats.rows += rows;
  }
  if (status != SQLITE_DONE) {
    throw Error(std::string("measurement cache: cannot count rows: ") + sqlite3_errmsg(db_),
                {.file = path()});
  }
  return stats;
}

int SqliteCache::clear() { return changes_of(db_, "DELETE FROM measurements", path()); }

int SqliteCache::prune(const CacheGeneration& current) {
  // The current generation as a temporary table, so one DELETE decides.
  exec(db_, "CREATE TEMP TABLE IF NOT EXISTS current_versions (backend TEXT, backend_version TEXT)",
       path());
  exec(db_, "DELETE FROM current_versions", path());
  for (const auto& [backend, version] : current.backend_versions) {
    Statement insert(db_, "INSERT INTO current_versions VALUES (?1, ?2)");
    sqlite3_bind_text(insert.get(), 1, backend.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert.get(), 2, version.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_step(insert.get());
  }
  Statement stmt(db_,
                 "DELETE FROM measurements WHERE substr(machine, 1, length(?1)) != ?1 OR "
                 "NOT EXISTS (SELECT 1 FROM "
                 "current_versions c WHERE c.backend = measurements.backend AND "
                 "c.backend_version = measurements.backend_version)");
  sqlite3_bind_text(stmt.get(), 1, current.machine_prefix.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(stmt.get()) != SQLITE_DONE) {
    throw Error(std::string("measurement cache: cannot prune: ") + sqlite3_errmsg(db_),
                {.file = path()});
  }
  return sqlite3_changes(db_);
}

std::string default_cache_path() {
  if (const char* url = std::getenv("COLLAGE_CACHE_URL"); url != nullptr && *url != '\0') {
    return url;
  }
  return (std::filesystem::path(cache_directory()) / "measurements.sqlite").string();
}

}  // namespace collage
