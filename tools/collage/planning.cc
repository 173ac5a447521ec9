#include "planning.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "collage/backends/native/native_backend.h"
#include "collage/backends/registry.h"
#include "collage/cost/machine_fingerprint.h"
#include "collage/cost/measurement_cache.h"
#include "collage/cost/measurer.h"
#include "collage/cost/measuring_estimator.h"
#include "collage/ir/error.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/plan/plan_builder.h"
#include "collage/search/collage_partitioner.h"
#include "progress.h"

namespace collage::cli {
namespace {

// The path of this executable, to start `collage worker` processes.
std::string self_executable() {
  char buffer[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) throw Error("cannot find the collage executable (/proc/self/exe)");
  return std::string(buffer, static_cast<std::size_t>(n));
}

std::vector<std::string> worker_command(const PlanningOptions& options) {
  std::vector<std::string> command = {self_executable(), "worker", options.model_path,
                                      "--threads", std::to_string(options.threads)};
  for (const auto& [name, shape] : options.input_shapes) {
    std::string dims;
    for (std::size_t i = 0; i < shape.size(); ++i) dims += (i ? "," : "") + std::to_string(shape[i]);
    command.push_back("--input-shape");
    command.push_back(name + "=" + dims);
  }
  return command;
}

PlanContext plan_context(const Strategy& strategy, const PlanningOptions& options) {
  return PlanContext{strategy.to_string(), options.model_path, options.input_shapes,
                     machine_text(options.threads), options.threads};
}

Plan collage_plan(const DataflowGraph& dfg, const Strategy& strategy,
                  const PlanningOptions& options) {
  std::vector<const Backend*> backends = resolve_backends(options.backends);
  std::vector<PartitionSpecPtr> specs = make_backend_specs(backends, options.specs);

  MeasureOptions measure_options;
  measure_options.threads = options.threads;
  std::unique_ptr<Measurer> measurer;
  if (options.isolate) {
    measurer = std::make_unique<WorkerMeasurer>(worker_command(options), measure_options);
  } else {
    measurer = std::make_unique<InProcessMeasurer>(BackendRegistry::global().get("native"),
                                                   measure_options);
  }
  std::unique_ptr<MeasurementCache> cache;
  if (options.cache_path != "none") {
    cache = MeasurementCache::open(options.cache_path.empty() ? default_cache_path()
                                                              : options.cache_path);
  }
  MeasuringEstimator estimator(*measurer, cache.get(),
                               measurement_context(machine_text(options.threads), measure_options));

  Progress progress("candidates", options.show_progress);
  CollageOptions collage_options;
  collage_options.prune = options.prune;
  collage_options.progress = [&](std::size_t done, std::size_t total, const CandidatePartition&,
                                 const Cost&) {
    const EstimatorCounters& c = estimator.counters();
    progress.update(ProgressCounts{done, total, c.measured, c.cache_hits, c.invalid});
  };
  CollageResult result = collage_partition(dfg, specs, estimator, collage_options);
  const EstimatorCounters& c = estimator.counters();
  progress.finish(ProgressCounts{result.candidates.size(), result.candidates.size(), c.measured,
                                 c.cache_hits, c.invalid});

  Plan plan = build_plan(dfg, result.search.partitions, plan_context(strategy, options),
                         result.candidates);
  for (const Backend* backend : backends) plan.backend_versions[backend->name()] = backend->version();
  plan.search.candidates = static_cast<int>(result.candidates.size());
  plan.search.measured = c.measured;
  plan.search.cache_hits = c.cache_hits;
  plan.search.invalid = c.invalid;
  plan.search.states_expanded = static_cast<int>(result.search.stats.states_expanded);
  plan.search.seconds = result.seconds;
  return plan;
}

// The native strategy: the whole model as one native partition, so the
// native backend fuses across the whole graph and no boundary is crossed.
Plan whole_graph_plan(const DataflowGraph& dfg, const Backend& native, const Strategy& strategy,
                      const PlanningOptions& options) {
  IndexSet operators = IndexSet::all(dfg.size()) - dfg.host_set();
  PartitionSpecPtr spec = make_backend_spec(native, options.specs);
  CandidatePartition whole{SubGraph(dfg, operators, "whole graph"), spec, "whole-graph"};
  Plan plan = build_plan(dfg, {ChosenPartition{whole, Cost::zero()}}, plan_context(strategy, options));
  plan.backend_versions[native.name()] = native.version();
  return plan;
}

}  // namespace

int default_threads() {
  unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(cores);
}

std::string machine_text(int threads) { return MachineFingerprint::current(threads).to_string(); }

std::vector<std::string> parse_backend_list(const std::string& text) {
  if (text == "all") return BackendRegistry::global().names();
  std::vector<std::string> names = split_backend_names(text);
  if (names.empty()) throw Error("no backend named", {.field = "--backends"});
  return names;
}

std::vector<const Backend*> resolve_backends(const std::vector<std::string>& names) {
  const BackendRegistry& registry = BackendRegistry::global();
  std::vector<const Backend*> backends = {&registry.get("native")};
  for (const std::string& name : names) {
    const Backend* backend = &registry.get(name);
    if (std::find(backends.begin(), backends.end(), backend) == backends.end()) {
      backends.push_back(backend);
    }
  }
  return backends;
}

Plan make_plan(const Graph& graph, const Strategy& strategy, const PlanningOptions& options) {
  DataflowGraph dfg(graph);
  if (strategy.kind == Strategy::Kind::kCollage) return collage_plan(dfg, strategy, options);

  const Backend& native = BackendRegistry::global().get("native");
  if (strategy.kind == Strategy::Kind::kNative) return whole_graph_plan(dfg, native, strategy, options);
  PartitionSpecPtr fallback = make_backend_spec(native, options.specs);
  std::vector<PartitionSpecPtr> priority;
  for (const Backend* backend : resolve_backends(strategy.backends)) {
    if (backend != &native) priority.push_back(make_backend_spec(*backend, options.specs));
  }
  std::vector<ChosenPartition> chosen = greedy_cover(dfg, priority, fallback);
  Plan plan = build_plan(dfg, chosen, plan_context(strategy, options));
  for (const PartitionSpecPtr& spec : priority) {
    plan.backend_versions[spec->name] = spec->backend->version();
  }
  plan.backend_versions[native.name()] = native.version();
  return plan;
}

}  // namespace collage::cli
