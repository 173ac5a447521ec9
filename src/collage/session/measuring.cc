#include "collage/session/measuring.h"

#include "collage/backends/registry.h"
#include "collage/ir/error.h"
#include "collage/session/fleet.h"
#include "collage/session/worker_location.h"

namespace collage {

std::vector<std::string> worker_command(const PlanningOptions& options) {
  std::vector<std::string> command = {
      options.worker_executable.empty() ? worker_executable() : options.worker_executable,
      "worker",
      options.model_path,
      "--threads",
      std::to_string(options.threads),
      "--graph-opt",
      std::string(to_string(options.graph_opt))};
  for (const auto& [name, shape] : options.input_shapes) {
    std::string dims;
    for (std::size_t i = 0; i < shape.size(); ++i)
      dims += (i ? "," : "") + std::to_string(shape[i]);
    command.push_back("--input-shape");
    command.push_back(name + "=" + dims);
  }
  for (const auto& [node, index] : options.body_path) {
    command.push_back("--body");
    command.push_back(std::to_string(index) + ":" + node);
  }
  return command;
}

std::vector<std::string> partition_worker_command(const std::string& executable, int threads) {
  return {executable.empty() ? worker_executable() : executable, "worker", "--partitions",
          "--threads", std::to_string(threads)};
}

std::unique_ptr<MeasurementCache> open_planning_cache(const PlanningOptions& options) {
  if (options.cache_path == "none") return nullptr;
  return MeasurementCache::open(options.cache_path.empty() ? default_cache_path()
                                                           : options.cache_path);
}

std::string measuring_machine(const PlanningOptions& options) {
  MeasureOptions measure_options;
  measure_options.threads = options.threads;
  return machine_key(machine_text(options.threads), measure_options,
                     std::string(to_string(options.graph_opt)));
}

std::optional<EdgeLayout> plan_compute_layout(const Plan& plan) {
  std::optional<EdgeLayout> layout;
  for (const auto& [backend, name] : plan.compute_layouts) layout = edge_layout_from_name(name);
  return layout;
}

Measuring open_measuring(const PlanningOptions& options) {
  Measuring measuring;
  MeasureOptions measure_options;
  measure_options.threads = options.threads;
  if (options.isolate) {
    measuring.measurer = std::make_unique<WorkerMeasurer>(worker_command(options), measure_options);
  } else {
    measuring.measurer =
        std::make_unique<InProcessMeasurer>(BackendRegistry::global().native(), measure_options);
  }
  const std::string cache_path =
      options.cache_path.empty() ? default_cache_path() : options.cache_path;
  if (options.remote_workers && (options.cache_path == "none" || !is_cache_url(cache_path))) {
    throw Error(
        "measuring on remote workers needs a PostgreSQL cache they share: --cache "
        "postgresql://... or $COLLAGE_CACHE_URL",
        {.field = "--workers"});
  }
  measuring.cache = open_planning_cache(options);
  measuring.machine = measuring_machine(options);
  measuring.estimator = std::make_unique<MeasuringEstimator>(
      *measuring.measurer, measuring.cache.get(), measuring.machine);
  if (options.remote_workers) {
    FleetOptions fleet;
    fleet.url = cache_path;
    fleet.measure_locally = options.measure_locally;
    fleet.measure = measure_options;
    fleet.machine = measuring.machine;
    fleet.worker_command = partition_worker_command(options.worker_executable, options.threads);
    fleet.progress = options.progress;
    measuring.fleet = std::make_unique<FleetMeasurer>(std::move(fleet));
    measuring.estimator->measure_with(measuring.fleet.get());
  }
  ProgressCallback progress = options.progress;
  measuring.estimator->prepare_with(
      options.threads, [progress](const std::string& line, std::size_t done, std::size_t total) {
        if (!progress) return;
        progress(TuneProgress{.stage = TuneProgress::Stage::kCompile,
                              .done = done,
                              .total = total,
                              .finished = total > 0 && done == total,
                              .message = line});
      });
  return measuring;
}

}  // namespace collage
