#include "collage/cost/measurement_transfer.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "collage/ir/error.h"
#include "collage/ir/file_io.h"

namespace collage {
namespace {

using Json = nlohmann::json;

constexpr const char* kFormat = "collage-measurements";
constexpr int kVersion = 1;
// An export of a large cache is tens of megabytes; this bounds a wrong file.
constexpr std::int64_t kMaxImportBytes = std::int64_t{1} << 30;

Json row_json(const std::string& key, const CachedMeasurement& m) {
  return {{"key", key},
          {"valid", m.valid},
          {"seconds", m.seconds},
          {"p90_seconds", m.p90_seconds},
          {"count", m.count},
          {"reason", m.reason},
          {"transient", m.transient},
          {"backend", m.backend},
          {"backend_version", m.backend_version},
          {"machine", m.machine}};
}

// One row of an import, every field checked.
std::pair<std::string, CachedMeasurement> row_of(const Json& json, const std::string& path,
                                                 int line) {
  auto fail = [&](const std::string& why) -> void {
    throw Error(fmt::format("line {}: {}", line, why), {.file = path});
  };
  if (!json.is_object()) fail("a row is an object");
  auto text = [&](const char* field) {
    if (!json.contains(field) || !json.at(field).is_string()) {
      fail(fmt::format("\"{}\" is missing or not a string", field));
    }
    return json.at(field).get<std::string>();
  };
  auto number = [&](const char* field) {
    if (!json.contains(field) || !json.at(field).is_number()) {
      fail(fmt::format("\"{}\" is missing or not a number", field));
    }
    const double value = json.at(field).get<double>();
    if (!std::isfinite(value) || value < 0) fail(fmt::format("\"{}\" is not a time", field));
    return value;
  };
  auto flag = [&](const char* field) {
    if (!json.contains(field) || !json.at(field).is_boolean()) {
      fail(fmt::format("\"{}\" is missing or not true/false", field));
    }
    return json.at(field).get<bool>();
  };
  CachedMeasurement m;
  std::string key = text("key");
  if (key.empty()) fail("\"key\" is empty");
  m.valid = flag("valid");
  m.seconds = number("seconds");
  m.p90_seconds = number("p90_seconds");
  if (!json.contains("count") || !json.at("count").is_number_integer() ||
      json.at("count").get<std::int64_t>() < 0 ||
      json.at("count").get<std::int64_t>() > std::int64_t{1} << 30) {
    fail("\"count\" is missing or not a count");
  }
  m.count = json.at("count").get<int>();
  m.reason = text("reason");
  m.transient = flag("transient");
  m.backend = text("backend");
  m.backend_version = text("backend_version");
  m.machine = text("machine");
  return {std::move(key), std::move(m)};
}

}  // namespace

int export_measurements(const MeasurementCache& cache, const std::string& path,
                        const std::string& machine_prefix) {
  std::string rows;
  int count = 0;
  cache.for_each([&](const std::string& key, const CachedMeasurement& m) {
    if (!machine_prefix.empty() && m.machine.rfind(machine_prefix, 0) != 0) return;
    rows += row_json(key, m).dump() + "\n";
    ++count;
  });
  const Json header = {{"format", kFormat}, {"version", kVersion}, {"rows", count}};
  write_file_atomically(path, header.dump() + "\n" + rows);
  return count;
}

ImportCounts import_measurements(MeasurementCache& cache, const std::string& path) {
  std::istringstream in(read_regular_file(path, kMaxImportBytes));
  std::string text;
  int line = 0;
  auto parse = [&](const std::string& what) {
    Json json = Json::parse(what, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) {
      throw Error(fmt::format("line {}: not JSON", line), {.file = path});
    }
    return json;
  };
  if (!std::getline(in, text)) {
    throw Error("empty: not an export of `collage cache export`", {.file = path});
  }
  ++line;
  Json header = parse(text);
  if (!header.is_object() || header.value("format", "") != kFormat) {
    throw Error("not an export of `collage cache export` (its first line names no format)",
                {.file = path});
  }
  if (!header.contains("version") || header.at("version") != kVersion) {
    throw Error(
        fmt::format("an export of format version {}; this build reads version {}",
                    header.contains("version") ? header.at("version").dump() : "?", kVersion),
        {.file = path});
  }
  std::vector<std::pair<std::string, CachedMeasurement>> rows;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty()) continue;
    rows.push_back(row_of(parse(text), path, line));
  }
  if (header.contains("rows") && header.at("rows").is_number_integer() &&
      header.at("rows").get<std::int64_t>() != static_cast<std::int64_t>(rows.size())) {
    throw Error(fmt::format("holds {} rows where its header says {}: cut short?", rows.size(),
                            header.at("rows").dump()),
                {.file = path});
  }
  ImportCounts counts;
  counts.read = static_cast<int>(rows.size());
  counts.stored = cache.merge(rows);
  return counts;
}

}  // namespace collage
