#include "collage/cost/postgres_connection.h"

#include <fmt/format.h>

#include <cstdlib>
#include <vector>

#include "collage/ir/error.h"

namespace collage {
namespace {

// Migrations, in order: migration i takes the schema from version i to i+1,
// one statement at a time.
const std::vector<std::vector<const char*>> kMigrations = {
    {"CREATE TABLE measurements ("
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
     "  measured_at TIMESTAMPTZ NOT NULL DEFAULT now())"},
    // A job measures one candidate for the measurement of its key: the
    // partition as an ONNX model (its large weights in job_weights, named in
    // `weights`), what to measure it with, and who holds it until when
    // (cost/job_queue.h).
    {"CREATE TABLE measurement_jobs ("
     "  key TEXT PRIMARY KEY,"
     "  machine_class TEXT NOT NULL,"
     "  machine TEXT NOT NULL,"
     "  backend TEXT NOT NULL,"
     "  backend_version TEXT NOT NULL,"
     "  threads INTEGER NOT NULL,"
     "  evict_bytes BIGINT NOT NULL,"
     "  partition BYTEA NOT NULL,"
     "  state TEXT NOT NULL DEFAULT 'queued',"
     "  worker TEXT NOT NULL DEFAULT '',"
     "  lease_until TIMESTAMPTZ,"
     "  attempts INTEGER NOT NULL DEFAULT 0,"
     "  posted_by TEXT NOT NULL DEFAULT '',"
     "  posted_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),"
     "  finished_at TIMESTAMPTZ,"
     "  weights TEXT NOT NULL DEFAULT '')",
     // Weights do not compress: stored as they come, posting is 3 times faster.
     "ALTER TABLE measurement_jobs ALTER COLUMN partition SET STORAGE EXTERNAL",
     "CREATE INDEX measurement_jobs_claim ON measurement_jobs (machine_class, state, posted_at)",
     // The large weights of the jobs' partitions, each once, by content.
     "CREATE TABLE job_weights ("
     "  name TEXT PRIMARY KEY,"
     "  data BYTEA NOT NULL,"
     "  posted_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())",
     "ALTER TABLE job_weights ALTER COLUMN data SET STORAGE EXTERNAL"},
};

// Held while the schema is checked and migrated: one key for Collage.
constexpr const char* kSchemaLockKey = "727001";

}  // namespace

int PgResult::affected() const { return std::atoi(PQcmdTuples(result_)); }

PgConnection::PgConnection(const std::string& url, bool read_only, std::string what)
    : name_(redacted_url(url)), what_(std::move(what)) {
  connection_ = PQconnectdb(url.c_str());
  if (connection_ == nullptr) throw Error("cannot connect: out of memory", {.file = name_});
  if (PQstatus(connection_) != CONNECTION_OK) {
    const std::string cause = message();
    PQfinish(connection_);
    connection_ = nullptr;
    throw Error(fmt::format("cannot connect to the {}: {}", what_, cause), {.file = name_});
  }
  // Notices (CREATE TABLE IF NOT EXISTS of a table that exists) stay quiet.
  PQsetNoticeProcessor(
      connection_, [](void*, const char*) {}, nullptr);
  try {
    if (read_only) {
      check_read_only();
    } else {
      migrate();
    }
  } catch (...) {
    PQfinish(connection_);
    connection_ = nullptr;
    throw;
  }
}

PgConnection::~PgConnection() {
  if (connection_ != nullptr) PQfinish(connection_);
}

PgResult PgConnection::run(const std::string& sql, const std::vector<std::string>& params,
                           const std::string& action, const std::vector<bool>& binary,
                           bool binary_result) const {
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
  for (std::size_t i = 0; i < params.size(); ++i) {
    values.push_back(params[i].data());
    lengths.push_back(static_cast<int>(params[i].size()));
    formats.push_back(i < binary.size() && binary[i] ? 1 : 0);
  }
  PgResult result(PQexecParams(connection_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                               values.data(), lengths.data(), formats.data(),
                               binary_result ? 1 : 0));
  const ExecStatusType status = PQresultStatus(result.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    throw Error(fmt::format("{}: cannot {}: {}", what_, action, message()), {.file = name_});
  }
  return result;
}

std::string PgConnection::message() const {
  std::string text = PQerrorMessage(connection_);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  std::string line;
  for (char c : text) {
    const bool space = c == '\n' || c == '\t';
    if (space && !line.empty() && line.back() == ' ') continue;
    line += space ? ' ' : c;
  }
  return line.empty() ? "the server did not answer" : escape_control(line);
}

void PgConnection::rollback() const { PQclear(PQexec(connection_, "ROLLBACK")); }

void PgConnection::migrate() {
  in_transaction("the schema check", [&] {
    run(std::string("SELECT pg_advisory_xact_lock(") + kSchemaLockKey + ")", {}, "lock the schema");
    run("CREATE TABLE IF NOT EXISTS collage_schema (version INTEGER NOT NULL)", {},
        "create the schema table");
    int version = schema_version();
    check_version(version);
    for (; version < kPostgresSchemaVersion; ++version) {
      for (const char* statement : kMigrations.at(static_cast<std::size_t>(version))) {
        run(statement, {}, "migrate the schema");
      }
      run("INSERT INTO collage_schema (version) VALUES ($1)", {std::to_string(version + 1)},
          "record the schema version");
    }
  });
}

void PgConnection::check_read_only() {
  PgResult exists = run("SELECT to_regclass('collage_schema') IS NOT NULL", {}, "read the schema");
  if (!exists.flag(0, 0)) {
    throw Error("no measurement cache in this database (a tune creates one)", {.file = name_});
  }
  check_version(schema_version());
}

int PgConnection::schema_version() const {
  PgResult result =
      run("SELECT coalesce(max(version), 0) FROM collage_schema", {}, "read the schema version");
  return std::atoi(result.text(0, 0).c_str());
}

void PgConnection::check_version(int version) const {
  if (version > kPostgresSchemaVersion) {
    throw Error(fmt::format("the database's cache schema is version {}; this collage knows "
                            "versions up to {}: use a newer collage with it",
                            version, kPostgresSchemaVersion),
                {.file = name_});
  }
}

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

}  // namespace collage
