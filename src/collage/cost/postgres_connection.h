// One connection to PostgreSQL through libpq, shared by the measurement
// cache (cost/postgres_cache.h) and the measurement job queue
// (cost/job_queue.h): parameterised queries, transactions, and the schema's
// numbered migrations.
//
// Schema: migrations recorded in collage_schema, applied on first use under
// an advisory lock (two tuners starting at once apply each migration once);
// a database whose schema is newer than this build's is refused.
// Credentials come from the URL, the environment (PGPASSWORD, PGUSER...) or
// ~/.pgpass, as libpq reads them; the database's name in messages is the URL
// without its password.
#pragma once

#include <libpq-fe.h>

#include <string>
#include <utility>
#include <vector>

namespace collage {

// The schema version this build writes and reads: 1 the measurements, 2 the
// measurement jobs.
inline constexpr int kPostgresSchemaVersion = 2;

// A query's result, cleared when it goes.
class PgResult {
 public:
  explicit PgResult(PGresult* result) : result_(result) {}
  ~PgResult() { PQclear(result_); }
  PgResult(PgResult&& other) noexcept : result_(std::exchange(other.result_, nullptr)) {}
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;
  PgResult& operator=(PgResult&&) = delete;
  PGresult* get() const { return result_; }
  int rows() const { return PQntuples(result_); }
  std::string text(int row, int column) const { return PQgetvalue(result_, row, column); }
  // A column of a binary result, byte for byte.
  std::string bytes(int row, int column) const {
    return std::string(PQgetvalue(result_, row, column),
                       static_cast<std::size_t>(PQgetlength(result_, row, column)));
  }
  bool flag(int row, int column) const { return text(row, column) == "t"; }
  bool is_null(int row, int column) const { return PQgetisnull(result_, row, column) != 0; }
  // Rows a command changed.
  int affected() const;

 private:
  PGresult* result_;
};

class PgConnection {
 public:
  // Connects to `url`; creates or upgrades the schema unless `read_only`
  // (which checks that there is a schema this build reads). `what` names
  // the database in messages ("measurement cache"). Throws Error (naming
  // the URL without its password) when the server cannot be reached,
  // refuses the credentials, or holds a newer schema.
  PgConnection(const std::string& url, bool read_only, std::string what);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // The URL without its password: what messages name.
  const std::string& name() const { return name_; }

  // Runs `sql` with `params` (text, or bytes where `binary` has a true at
  // its index); results come as text, or as bytes with `binary_result`.
  // Throws Error naming the database and `action` ("read") on failure.
  PgResult run(const std::string& sql, const std::vector<std::string>& params = {},
               const std::string& action = "query", const std::vector<bool>& binary = {},
               bool binary_result = false) const;

  // Runs `body` in one transaction ("action" names it in errors): committed
  // when it returns, rolled back when it throws.
  template <typename Body>
  void in_transaction(const std::string& action, Body body) const {
    run("BEGIN", {}, "start " + action);
    try {
      body();
      run("COMMIT", {}, "commit " + action);
    } catch (...) {
      rollback();
      throw;
    }
  }

  // libpq's last message, on one line.
  std::string message() const;

 private:
  void rollback() const;
  void migrate();
  void check_read_only();
  int schema_version() const;
  void check_version(int version) const;

  PGconn* connection_ = nullptr;
  std::string name_;
  std::string what_;
};

// `url` with the password of its user-info part, and any password=
// parameter, replaced by "***".
std::string redacted_url(const std::string& url);

}  // namespace collage
