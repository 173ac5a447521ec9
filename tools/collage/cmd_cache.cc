// `collage cache stats|clear|prune|export|import`: look after the
// measurement cache.
//
// stats: rows, by backend and by machine class, valid / invalid / transient
// failures, file size. export / import: move measurements between caches
// (cost/measurement_transfer.h).
// clear: delete every row. prune: delete the rows no run of this build on
// this machine can use (other backend library or code versions, another
// CPU), which are otherwise kept forever.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "collage/backends/registry.h"
#include "collage/cost/machine_fingerprint.h"
#include "collage/cost/measurement_cache.h"
#include "collage/cost/measurement_transfer.h"
#include "collage/cost/measuring_estimator.h"
#include "collage/ir/error.h"
#include "collage/ir/structural_hash.h"
#include "collage/runtime/memory_budget.h"
#include "commands.h"

namespace collage::cli {
namespace {

struct CacheArgs {
  std::string cache;
  // export / import: the file.
  std::string file;
  // export: only this machine's rows.
  bool this_machine = false;
};

// The CPU part of this machine's measurement contexts: rows that begin
// with it were measured on a machine of this class (any thread count).
std::string this_machine_prefix() {
  MachineFingerprint machine = MachineFingerprint::current(1);
  return machine.cpu_model + "|" + machine.isa_flags + "|";
}

// A machine context as a short line: the CPU model, how many ISA features
// it lists, the threads, and a hash of the rest (the timing protocol).
std::string machine_class(const std::string& machine) {
  if (machine.empty())
    return "(none recorded: layout conversions, learned charges; their keys hold the machine)";
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= machine.size()) {
    std::size_t bar = machine.find('|', start);
    if (bar == std::string::npos) bar = machine.size();
    parts.push_back(machine.substr(start, bar - start));
    start = bar + 1;
  }
  if (parts.size() < 3) return machine;
  const std::string& flags = parts[1];
  const auto features = flags.empty() ? 0 : std::count(flags.begin(), flags.end(), ',') + 1;
  std::string rest;
  for (std::size_t i = 3; i < parts.size(); ++i) rest += parts[i] + "|";
  return fmt::format("{} ({} ISA features), {}, protocol {:08x}", parts[0], features, parts[2],
                     static_cast<std::uint32_t>(fnv1a_64(rest)));
}

std::string cache_path(const CacheArgs& args) {
  return args.cache.empty() ? default_cache_path() : args.cache;
}

// The path of an existing cache; unlike tuning, these commands never create one.
std::string existing_cache_path(const CacheArgs& args) {
  const std::string path = cache_path(args);
  // A database is checked when it is opened.
  if (is_cache_url(path)) return path;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw Error("no measurement cache here", {.file = path, .field = "--cache"});
  }
  return path;
}

std::unique_ptr<MeasurementCache> open_existing(const CacheArgs& args) {
  return MeasurementCache::open(existing_cache_path(args));
}

std::int64_t file_bytes(const std::string& path) {
  std::int64_t total = 0;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::error_code ec;
    auto size = std::filesystem::file_size(path + suffix, ec);
    if (!ec) total += static_cast<std::int64_t>(size);
  }
  return total;
}

void run_stats(const CacheArgs& args) {
  // Read-only: counting rows needs no write access, and a damaged file is
  // reported as such rather than counted as far as it reads.
  auto cache = MeasurementCache::open_read_only(existing_cache_path(args));
  cache->check_integrity();
  CacheStats stats = cache->stats();
  if (is_cache_url(cache->path())) {
    fmt::print("cache: {} (PostgreSQL)\n", cache->path());
  } else {
    fmt::print("cache: {} ({} with its journal)\n", cache->path(),
               format_bytes(file_bytes(cache->path())));
  }
  fmt::print("rows: {}\n", stats.rows);
  if (!stats.jobs.empty() || stats.job_weight_bytes > 0) {
    std::vector<std::string> states;
    for (const char* state : {"queued", "running", "lease run out", "done"}) {
      auto it = stats.jobs.find(state);
      if (it != stats.jobs.end()) states.push_back(fmt::format("{} {}", it->second, state));
    }
    fmt::print("measurement jobs: {}; their weights: {}\n",
               states.empty() ? std::string("none") : fmt::format("{}", fmt::join(states, ", ")),
               format_bytes(stats.job_weight_bytes));
  }
  fmt::print("{:<12} {:>8} {:>8} {:>10}\n", "backend", "valid", "invalid", "transient");
  for (const auto& [backend, counts] : stats.by_backend) {
    fmt::print("{:<12} {:>8} {:>8} {:>10}\n", backend.empty() ? "(unknown)" : backend, counts.valid,
               counts.invalid, counts.transient);
  }
  // Measurements count only for the machine class they were taken on.
  const std::string here = this_machine_prefix();
  fmt::print("\n{:>8} {:>8} {:>10}  {}\n", "valid", "invalid", "transient", "machine class");
  for (const auto& [machine, counts] : stats.by_machine) {
    fmt::print("{:>8} {:>8} {:>10}  {}{}\n", counts.valid, counts.invalid, counts.transient,
               escape_control(machine_class(machine)),
               machine.rfind(here, 0) == 0 ? "  (this machine)" : "");
  }
}

void run_export(const CacheArgs& args) {
  auto cache = MeasurementCache::open_read_only(existing_cache_path(args));
  const int rows =
      export_measurements(*cache, args.file, args.this_machine ? this_machine_prefix() : "");
  fmt::print("exported {} rows{} from {} to {}\n", rows,
             args.this_machine ? " of this machine" : "", cache->path(), args.file);
}

void run_import(const CacheArgs& args) {
  // Importing may start a cache.
  auto cache = MeasurementCache::open(cache_path(args));
  ImportCounts counts = import_measurements(*cache, args.file);
  fmt::print("imported {} of {} rows from {} into {} ({} kept: a valid measurement here)\n",
             counts.stored, counts.read, args.file, cache->path(), counts.read - counts.stored);
}

void run_clear(const CacheArgs& args) {
  auto cache = open_existing(args);
  fmt::print("deleted {} rows from {}\n", cache->clear(), cache->path());
}

void run_prune(const CacheArgs& args) {
  auto cache = open_existing(args);
  CacheGeneration current;
  for (const std::string& name : BackendRegistry::global().names()) {
    current.backend_versions[name] = backend_version_key(BackendRegistry::global().get(name));
  }
  // Rows of every thread count on this CPU stay: only the CPU part of the
  // fingerprint must match.
  current.machine_prefix = this_machine_prefix();
  fmt::print("deleted {} rows of other backend versions or machines from {}\n",
             cache->prune(current), cache->path());
}

}  // namespace

void add_cache_command(CLI::App& app) {
  auto args = std::make_shared<CacheArgs>();
  CLI::App* cmd = app.add_subcommand("cache", "Inspect, clear or prune the measurement cache");
  cmd->require_subcommand(1);
  auto add = [&](const char* name, const char* help, void (*run)(const CacheArgs&)) {
    CLI::App* sub = cmd->add_subcommand(name, help);
    sub->add_option("--cache", args->cache,
                    "measurement cache file (default: $XDG_CACHE_HOME/collage/"
                    "measurements.sqlite)");
    sub->callback([args, run] { run(*args); });
  };
  add("stats", "Rows by backend and machine class: valid, invalid and transient failures; size",
      run_stats);
  add("clear", "Delete every measurement", run_clear);
  add("prune", "Delete measurements of other backend versions or machines", run_prune);
  add("export", "Write the measurements to FILE (JSON lines), for another cache or machine",
      run_export);
  add("import", "Merge the measurements of FILE (from export) into the cache", run_import);
  for (const char* name : {"export", "import"}) {
    cmd->get_subcommand(name)->add_option("file", args->file, "the export file")->required();
  }
  cmd->get_subcommand("export")->add_flag(
      "--this-machine", args->this_machine,
      "only the measurements taken on a machine of this class (this CPU and its features)");
}

}  // namespace collage::cli
