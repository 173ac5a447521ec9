// The measurement cache in PostgreSQL: one database that many tuners (and
// the machines they run on) share (`--cache postgresql://...`, or
// $COLLAGE_CACHE_URL). The same rows as the SQLite file; every query is
// parameterised; a measurement is committed when it is stored.
//
// Schema: numbered migrations recorded in collage_schema, applied on first
// use under an advisory lock (two tuners starting at once apply each
// migration once); a database whose schema is newer than this build's is
// refused. Credentials come from the URL, the environment (PGPASSWORD,
// PGUSER...) or ~/.pgpass, as libpq reads them; the cache's name in
// messages is the URL without its password.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collage/cost/measurement_cache.h"
#include "collage/cost/postgres_connection.h"

namespace collage {

// Connects to `url`; creates or upgrades the schema unless `read_only`.
// Throws Error (naming the URL without its password) when the server
// cannot be reached, refuses the credentials, or holds a newer schema.
std::unique_ptr<MeasurementCache> open_postgres_cache(const std::string& url, bool read_only);

// The statement that stores a measurement ($1 the key, then the columns of
// `measurement_params`), replacing the row of its key, followed by
// `condition` (" WHERE ..." of the ON CONFLICT update, or "").
std::string measurement_upsert(const std::string& condition);
std::vector<std::string> measurement_params(const std::string& key, const CachedMeasurement& m);

}  // namespace collage
