// What measures candidates for a collage plan: the measurer (a worker
// process unless options.isolate is off), the measurement cache and the
// estimator over them, under one key of the machine and how it measures.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collage/cost/measurement_cache.h"
#include "collage/cost/measurer.h"
#include "collage/cost/measuring_estimator.h"
#include "collage/plan/plan.h"
#include "collage/session/planning_options.h"

namespace collage {

struct Measuring {
  std::unique_ptr<Measurer> measurer;
  // None with cache_path "none".
  std::unique_ptr<MeasurementCache> cache;
  // The machine and how it measures (measurement_context()) and the graph
  // optimization level: part of every measurement's and overhead's key.
  std::string machine;
  std::unique_ptr<MeasuringEstimator> estimator;
  // With options.remote_workers: what the estimator measures through.
  std::unique_ptr<BatchMeasurer> fleet;
};

// The measurement cache `options` name (cache_path; empty: the default),
// or none for "none".
std::unique_ptr<MeasurementCache> open_planning_cache(const PlanningOptions& options);

// The machine and how it measures for `options`: Measuring::machine.
std::string measuring_machine(const PlanningOptions& options);

// The layout `plan`'s partitions are measured in, as a search in it
// measured them (backends/search_layout.h): the one its compute_layouts
// name; none when they name none.
std::optional<EdgeLayout> plan_compute_layout(const Plan& plan);

// Opens the measurer, the cache and the estimator `options` ask for;
// backends that compile ahead report their work to options.progress.
Measuring open_measuring(const PlanningOptions& options);

// The command line of the `collage worker` that measures for `options`.
std::vector<std::string> worker_command(const PlanningOptions& options);

// The command line of a `collage worker --partitions` that measures
// partitions handed over as ONNX bytes (measurement jobs) with `threads`.
std::vector<std::string> partition_worker_command(const std::string& executable, int threads);

}  // namespace collage
