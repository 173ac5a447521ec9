// Moving measurements between caches (`collage cache export|import`): from
// one machine to another of the same class, or from a tuner's cache into a
// shared one. A file holds JSON lines: a header line
// {"format": "collage-measurements", "version": 1, "rows": N}, then one row
// per line with every column of the cache (its key, the cost, the backend
// and its version key, the measurement context). Keys carry the machine
// class, so a row only ever answers a tuner on a machine of its class.
#pragma once

#include <string>

#include "collage/cost/measurement_cache.h"

namespace collage {

// Writes the rows of `cache` to `path` (replacing it atomically); with a
// non-empty `machine_prefix`, only rows whose context begins with it.
// Returns how many rows were written.
int export_measurements(const MeasurementCache& cache, const std::string& path,
                        const std::string& machine_prefix = "");

struct ImportCounts {
  int read = 0;
  // Stored: new keys, or keys whose row here was not valid.
  int stored = 0;
};

// Reads a file export_measurements() wrote and merges its rows into `cache`
// (MeasurementCache::merge: all or none). Throws Error naming the file and
// the line for anything malformed, before storing any row.
ImportCounts import_measurements(MeasurementCache& cache, const std::string& path);

}  // namespace collage
