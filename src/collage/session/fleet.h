// Measuring on a fleet: tuners post measurement jobs to a PostgreSQL
// database (cost/job_queue.h) and `collage worker --cache postgresql://...`
// processes, one per measuring machine, measure them (docs/fleet.md).
//
// FleetMeasurer is the tuner's side (`collage tune --workers remote`): it
// posts the candidates the cache lacks as jobs, measures some of them
// itself unless told not to, and waits for the rest, reporting jobs queued,
// running and done per worker. run_fleet_worker() is a worker's loop: claim
// the oldest job of its machine class, measure it in a child process under
// a lease renewed beside it, store the result, and go on.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collage/cost/job_queue.h"
#include "collage/cost/measurement_server.h"
#include "collage/cost/measurer.h"
#include "collage/cost/measuring_estimator.h"
#include "collage/onnx/graph_bytes.h"
#include "collage/session/planning_options.h"

namespace collage {

// How long a claimed job is a worker's before another may claim it,
// renewed every third of it while the worker measures.
inline constexpr double kDefaultLeaseSeconds = 30;

// The machine class a measurement of `threads` threads with `options` is
// taken in: the measurement context without the graph optimization level.
std::string machine_class(int threads, const MeasureOptions& options);

// The backends a worker can measure: name -> backend_version_key().
std::map<std::string, std::string> backend_versions();

struct FleetOptions {
  std::string url;
  // Measure jobs of this tune here too, while the workers measure others.
  bool measure_locally = true;
  double lease_seconds = kDefaultLeaseSeconds;
  MeasureOptions measure;
  // The context stored with each measurement (Measuring::machine).
  std::string machine;
  // `collage worker --partitions --threads N`: where local measurements run.
  std::vector<std::string> worker_command;
  // Hears the jobs' states as they change (TuneProgress::Stage::kJobs:
  // done of total, the rest in the message), and notes (total 0).
  ProgressCallback progress;
  // Seconds between looks at the queue while waiting.
  double poll_seconds = 0.5;
};

class FleetMeasurer final : public BatchMeasurer {
 public:
  explicit FleetMeasurer(FleetOptions options);
  void measure_all(const Graph& model, std::vector<Item> items) override;

 private:
  FleetOptions options_;
  JobQueue queue_;
  // The weights this tuner has hashed and posted.
  WeightNames weight_names_;
  std::string machine_class_;
  std::unique_ptr<PartitionWorker> local_;
};

struct FleetWorkerOptions {
  std::string url;
  // The name claims are made under: host:pid unless given.
  std::string name;
  int threads = 1;
  double lease_seconds = kDefaultLeaseSeconds;
  // Stop after this many seconds without a job; 0: never.
  double idle_exit_seconds = 0;
  double poll_seconds = 0.5;
  // `collage worker --partitions --threads N`.
  std::vector<std::string> worker_command;
  // Hears one line per job claimed and finished.
  std::function<void(const std::string&)> log;
  // Set (by a signal) to stop claiming; the job in hand is finished first.
  const std::atomic<bool>* stop = nullptr;
};

// Returns the number of jobs finished.
int run_fleet_worker(const FleetWorkerOptions& options);

// The default worker name: this host's name and process id.
std::string default_worker_name();

}  // namespace collage
