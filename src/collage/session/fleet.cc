#include "collage/session/fleet.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <limits>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>

#include "collage/backends/compiles_ahead.h"
#include "collage/backends/registry.h"
#include "collage/backends/search_layout.h"
#include "collage/cost/cache_keys.h"
#include "collage/cost/cache_state.h"
#include "collage/ir/error.h"
#include "collage/ir/file_io.h"
#include "collage/ir/flops.h"
#include "collage/onnx/graph_bytes.h"
#include "collage/runtime/timing.h"

namespace collage {
namespace {

using Clock = std::chrono::steady_clock;

void sleep_for(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

// What a job's measurement is stored as.
CachedMeasurement job_result(const MeasurementJob& job, const Cost& cost) {
  CachedMeasurement entry = cache_entry_from_cost(cost);
  entry.backend = job.backend;
  entry.backend_version = job.backend_version;
  entry.machine = job.machine;
  return entry;
}

// The start of a job's key (the partition's structural hash), for logs.
std::string short_key(const std::string& key) { return key.substr(0, key.find('|')); }

std::string describe(const Cost& cost) {
  if (!cost.is_valid()) return "invalid: " + cost.reason();
  return fmt::format("{:.3f} ms", cost.seconds() * 1e3);
}

// Renews a lease every third of it on a connection of its own, until
// destroyed.
class LeaseKeeper {
 public:
  LeaseKeeper(JobQueue& queue, std::string key, double lease_seconds)
      : queue_(queue), key_(std::move(key)), lease_seconds_(lease_seconds) {
    thread_ = std::thread([this] { run(); });
  }
  ~LeaseKeeper() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto period = std::chrono::duration<double>(lease_seconds_ / 3);
    while (!wake_.wait_for(lock, period, [this] { return done_; })) {
      try {
        queue_.renew(key_, lease_seconds_);
      } catch (const std::exception&) {
        // The server is gone: the job will be claimed again once the
        // lease runs out; finishing it says so.
      }
    }
  }

  JobQueue& queue_;
  std::string key_;
  double lease_seconds_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

// Fetches the weight files `job` refers to that `worker` does not have;
// a failure to measure when one is missing or the job does not parse.
std::optional<Cost> fetch_weights(const JobQueue& queue, const MeasurementJob& job,
                                  const PartitionWorker& worker) {
  std::vector<std::string> files;
  try {
    files = weight_files(job.partition);
  } catch (const Error& e) {
    return Cost::invalid(std::string("malformed job: ") + e.what());
  }
  const std::filesystem::path dir = worker.weights_directory();
  for (const std::string& name : files) {
    const std::filesystem::path path = dir / name;
    if (std::filesystem::exists(path)) continue;
    std::optional<std::string> bytes = queue.weight(name);
    if (!bytes) {
      return Cost::transient_invalid(job.backend + ": weight " + name +
                                     " is no longer in the database");
    }
    write_file_atomically(path.string(), *bytes);
  }
  return std::nullopt;
}

// Measures a claimed job with `worker`.
Cost measure_job(const JobQueue& queue, const MeasurementJob& job, PartitionWorker& worker) {
  if (std::optional<Cost> failed = fetch_weights(queue, job, worker)) return *failed;
  return worker.measure(job.partition, job.backend, job.evict_bytes);
}

// Empties a worker's weight directory once it holds more than `limit`
// bytes: a worker serving many models keeps only the recent ones' weights.
void bound_weights(const PartitionWorker& worker, std::uintmax_t limit) {
  std::error_code error;
  std::uintmax_t total = 0;
  for (const auto& entry : std::filesystem::directory_iterator(worker.weights_directory(), error)) {
    total += entry.file_size(error);
  }
  if (total <= limit) return;
  for (const auto& entry : std::filesystem::directory_iterator(worker.weights_directory(), error)) {
    std::filesystem::remove(entry.path(), error);
  }
}

// "a 3 (1 running), b 5"
std::string by_worker(const JobCounts& counts) {
  std::map<std::string, std::pair<int, int>> workers;
  for (const auto& [name, n] : counts.done_by_worker) workers[name].first += n;
  for (const auto& [name, n] : counts.running_by_worker) workers[name].second += n;
  std::vector<std::string> parts;
  for (const auto& [name, n] : workers) {
    parts.push_back(n.second > 0 ? fmt::format("{} {} ({} running)", name, n.first, n.second)
                                 : fmt::format("{} {}", name, n.first));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::vector<std::string> names_of(const std::map<std::string, std::string>& versions) {
  std::vector<std::string> names;
  for (const auto& entry : versions) names.push_back(entry.first);
  return names;
}

}  // namespace

std::string machine_class(int threads, const MeasureOptions& options) {
  MeasureOptions with_threads = options;
  with_threads.threads = threads;
  return measurement_context(machine_text(threads), with_threads);
}

std::map<std::string, std::string> backend_versions() {
  std::map<std::string, std::string> versions;
  for (const Backend* backend : BackendRegistry::global().all()) {
    versions[backend->name()] = backend_version_key(*backend);
    // The jobs of a search in a compute layout (backends/search_layout.h).
    for (EdgeLayout layout :
         {EdgeLayout::kChannelsLast, EdgeLayout::kBlocked8, EdgeLayout::kBlocked16}) {
      if (searched_in_layout(*backend, layout)) {
        versions[backend->name() + "@" + edge_layout_name(layout)] = backend_version_key(*backend);
      }
    }
  }
  return versions;
}

std::string default_worker_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return fmt::format("{}:{}", *host ? host : "localhost", ::getpid());
}

FleetMeasurer::FleetMeasurer(FleetOptions options)
    : options_(std::move(options)),
      queue_(options_.url, "tuner " + default_worker_name()),
      machine_class_(machine_class(options_.measure.threads, options_.measure)) {
  if (options_.measure_locally) {
    local_ = std::make_unique<PartitionWorker>(options_.worker_command,
                                               options_.measure.timeout_seconds);
  }
}

void FleetMeasurer::measure_all(const Graph& model, std::vector<Item> items) {
  auto note = [&](std::string line) {
    if (options_.progress) {
      options_.progress(TuneProgress{.stage = TuneProgress::Stage::kJobs, .message = line});
    }
  };
  // The longest jobs first, so that no worker is left with one at the end
  // while the others wait: those of a backend that compiles as it measures
  // (seconds each), then by work.
  std::vector<std::pair<std::int64_t, std::size_t>> order;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const bool compiles = compiles_ahead(*items[i].backend) != nullptr;
    order.emplace_back(
        compiles ? std::numeric_limits<std::int64_t>::max() : graph_flops(items[i].partition), i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  // Posted a few at a time, each few committed at once: the workers start
  // on the first while the rest are encoded and sent.
  constexpr std::size_t kPostBytes = std::size_t{16} << 20;
  std::vector<std::string> keys;
  std::vector<MeasurementJob> chunk;
  std::vector<std::pair<std::string, std::string_view>> chunk_weights;
  std::set<std::string> posted_weights;
  std::size_t chunk_bytes = 0;
  int queued = 0;
  auto post = [&] {
    queued += queue_.post(chunk, chunk_weights, queue_.worker());
    chunk.clear();
    chunk_weights.clear();
    chunk_bytes = 0;
  };
  for (const auto& [work, index] : order) {
    const Item& item = items[index];
    MeasurementJob job;
    job.key = item.key;
    job.machine_class = machine_class_;
    job.machine = options_.machine;
    job.backend = measured_as(*item.backend);
    job.backend_version = backend_version_key(*item.backend);
    job.threads = options_.measure.threads;
    job.evict_bytes =
        options_.measure.plan_caches
            ? static_cast<std::int64_t>(eviction_bytes(model, item.nodes, job.threads))
            : 0;
    PackedGraph packed = pack_graph(item.partition, weight_names_);
    job.partition = std::move(packed.model);
    chunk_bytes += job.partition.size();
    for (const auto& [name, weight] : packed.weights) {
      job.weights.push_back(name);
      if (!posted_weights.insert(name).second) continue;
      // The model's buffer, alive while `model` is.
      chunk_weights.emplace_back(
          name, std::string_view(static_cast<const char*>(weight.raw()), weight.byte_size()));
      chunk_bytes += weight.byte_size();
    }
    keys.push_back(job.key);
    chunk.push_back(std::move(job));
    if (chunk_bytes >= kPostBytes) post();
  }
  if (!chunk.empty()) post();
  // One job at a time (a candidate met after the first search) is not
  // worth a line.
  const bool batch = keys.size() > 1;
  if (batch) {
    note(
        fmt::format("{} measurement jobs posted to {} ({} new, {} shared with another tuner "
                    "or measured meanwhile)",
                    keys.size(), queue_.name(), queued, keys.size() - queued));
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  queue_.watch(keys);
  const std::map<std::string, std::string> versions = backend_versions();
  // A local claim is held through one measurement, time limit included.
  const double local_lease = options_.lease_seconds + options_.measure.timeout_seconds;
  std::string last_line;
  Clock::time_point last_change = Clock::now();
  bool stall_said = false;
  while (true) {
    const JobCounts counts = queue_.counts();
    const bool finished = counts.done >= static_cast<int>(keys.size());
    const std::string line =
        fmt::format("{} queued  {} running{}{}", counts.queued, counts.running,
                    counts.done + counts.running > 0 ? "  by worker: " : "", by_worker(counts));
    if (line != last_line || finished) {
      last_line = line;
      last_change = Clock::now();
      if (options_.progress && batch) {
        options_.progress(TuneProgress{.stage = TuneProgress::Stage::kJobs,
                                       .done = static_cast<std::size_t>(counts.done),
                                       .total = keys.size(),
                                       .finished = finished,
                                       .message = line});
      }
    }
    if (finished) {
      queue_.collect_weights();
      return;
    }
    if (local_) {
      if (std::optional<MeasurementJob> job =
              queue_.claim(machine_class_, versions, local_lease, true)) {
        const Cost cost = measure_job(queue_, *job, *local_);
        queue_.finish(*job, job_result(*job, cost));
        continue;
      }
    }
    if (!stall_said && counts.running == 0 && seconds_since(last_change) > 60) {
      stall_said = true;
      note(fmt::format(
          "no worker of this machine class has taken a job for a minute: start `collage worker "
          "--cache URL --threads {}` on a machine like this one",
          options_.measure.threads));
    }
    sleep_for(options_.poll_seconds);
  }
}

int run_fleet_worker(const FleetWorkerOptions& options) {
  const std::string name = options.name.empty() ? default_worker_name() : options.name;
  JobQueue queue(options.url, name);
  JobQueue renewals(options.url, name);
  MeasureOptions measure;
  measure.threads = options.threads;
  const std::string cls = machine_class(options.threads, measure);
  const std::map<std::string, std::string> versions = backend_versions();
  PartitionWorker child(options.worker_command, measure.timeout_seconds);
  auto log = [&](const std::string& line) {
    if (options.log) options.log(line);
  };
  log(fmt::format("worker {}: measuring the jobs of {} ({} thread{} per kernel; backends {})", name,
                  queue.name(), options.threads, options.threads == 1 ? "" : "s",
                  fmt::join(names_of(versions), ",")));
  int finished = 0;
  Clock::time_point idle_since = Clock::now();
  while (options.stop == nullptr || !options.stop->load()) {
    std::optional<MeasurementJob> job = queue.claim(cls, versions, options.lease_seconds);
    if (!job) {
      if (options.idle_exit_seconds > 0 && seconds_since(idle_since) >= options.idle_exit_seconds) {
        log(fmt::format("worker {}: no job for {:g} s; stopping", name, options.idle_exit_seconds));
        break;
      }
      sleep_for(options.poll_seconds);
      continue;
    }
    Cost cost = Cost::invalid("not measured");
    {
      LeaseKeeper lease(renewals, job->key, options.lease_seconds);
      cost = measure_job(queue, *job, child);
    }
    bound_weights(child, std::uintmax_t{2} << 30);
    const bool stored = queue.finish(*job, job_result(*job, cost));
    ++finished;
    log(fmt::format("worker {}: {} {} (attempt {}): {}{}", name, job->backend, short_key(job->key),
                    job->attempts, describe(cost),
                    stored ? "" : " — not stored: the lease ran out and another worker has it"));
    idle_since = Clock::now();
  }
  return finished;
}

}  // namespace collage
