#include "collage/session/planning.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "collage/backends/native/native_backend.h"
#include "collage/backends/registry.h"
#include "collage/cost/boundary_costs.h"
#include "collage/cost/in_context_estimator.h"
#include "collage/cost/machine_fingerprint.h"
#include "collage/cost/measurement_cache.h"
#include "collage/cost/measurer.h"
#include "collage/cost/measuring_estimator.h"
#include "collage/ir/error.h"
#include "collage/ir/structural_hash.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/plan/plan_builder.h"
#include "collage/plan/plan_profile.h"
#include "collage/runtime/random_inputs.h"
#include "collage/runtime/timing.h"
#include "collage/search/collage_partitioner.h"
#include "collage/search/local_moves.h"
#include "collage/session/move_refinement.h"

namespace collage {
namespace {

// The path of this process's executable.
std::string self_executable() {
  char buffer[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) return "";
  return std::string(buffer, static_cast<std::size_t>(n));
}

// The file of the shared library (or executable) this code was linked into.
std::filesystem::path this_code_file() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&self_executable), &info) == 0 || !info.dli_fname) return {};
  std::error_code ec;
  std::filesystem::path path = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::filesystem::path() : path;
}

SpecOptions spec_options(const SearchSettings& settings) {
  SpecOptions specs;
  specs.graph_max_depth = static_cast<std::size_t>(settings.max_depth);
  specs.compiler_max_depth = static_cast<std::size_t>(settings.max_depth);
  specs.max_exits = static_cast<std::size_t>(settings.max_exits);
  return specs;
}

bool is_executable_file(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

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
  return command;
}

PlanContext plan_context(const Strategy& strategy, const PlanningOptions& options) {
  return PlanContext{strategy.to_string(), options.model_path,
                     options.input_shapes, machine_text(options.threads),
                     options.threads,      std::string(to_string(options.graph_opt))};
}

std::string overheads_text(const PartitionOverheads& overheads) {
  std::vector<std::string> parts;
  for (const auto& [backend, seconds] : overheads.seconds) {
    parts.push_back(fmt::format("{} {:.1f} us", backend, seconds * 1e6));
  }
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ", "));
}

// The plan's estimates with the overheads learned last (from this model's
// profiles when it has been profiled) in place of those charged while searching (which may be
// older, or kept to reproduce the plan): the search's best account of what the plan costs.
Plan with_estimates_in_context(Plan plan, const PartitionOverheads& charged,
                               const PartitionOverheads& learned) {
  double total = 0;
  for (PlanPartition& partition : plan.partitions) {
    if (!partition.estimated_ms) return plan;
    *partition.estimated_ms +=
        (learned.of(partition.backend) - charged.of(partition.backend)) * 1e3;
    total += *partition.estimated_ms;
  }
  plan.estimated_ms = total;
  return plan;
}

// How much longer (ms; negative: shorter) `candidate` takes when measured
// again now than the measurement the search used. None when either is not
// valid, or the candidate is not a backend's.
std::optional<double> change_now_ms(MeasuringEstimator& estimator, const DataflowGraph& dfg,
                                    const CandidatePartition& candidate) {
  if (candidate.spec->backend == nullptr) return std::nullopt;
  const Cost searched = estimator.estimate(dfg, candidate);
  const Cost now = estimator.measure_now(dfg, candidate);
  if (!searched.is_valid() || !now.is_valid()) return std::nullopt;
  return (now.seconds() - searched.seconds()) * 1e3;
}

// `plan`, made of `cover` (in its order), with each partition's isolated
// time measured again now in place of the one the search used; the
// searched estimate is kept in plan.search.search_estimated_ms. Charges on
// top of the isolated times (overheads, conversions at boundaries) stay as
// they were. A plan whose partitions do not all have an estimate is
// returned as it is.
Plan with_parts_timed_now(const Plan& plan, const DataflowGraph& dfg,
                          const std::vector<ChosenPartition>& cover,
                          MeasuringEstimator& estimator) {
  if (!plan.estimated_ms || cover.size() != plan.partitions.size()) return plan;
  Plan timed = plan;
  double total = 0;
  for (std::size_t i = 0; i < cover.size(); ++i) {
    PlanPartition& partition = timed.partitions[i];
    const CandidatePartition& candidate = cover[i].candidate;
    const std::vector<NodeId> nodes = candidate.sub_graph.node_ids(dfg);
    if (!partition.estimated_ms || nodes.empty() || partition.nodes.empty() ||
        partition.nodes.front() != dfg.graph().node(nodes.front()).name) {
      return plan;
    }
    if (std::optional<double> change = change_now_ms(estimator, dfg, candidate)) {
      *partition.estimated_ms += *change;
    }
    total += *partition.estimated_ms;
  }
  timed.estimated_ms = total;
  timed.search.search_estimated_ms = plan.estimated_ms;
  return timed;
}

// Puts into `profile` the estimates of `timed`, its plan with its parts
// timed again (with_parts_timed_now), so that what its runs show beyond
// them is the plan's overhead, not how much faster or slower the machine
// runs now than when the candidates were measured.
void put_parts_timed(PlanProfile& profile, const Plan& timed) {
  for (PartitionProfile& row : profile.partitions) {
    row.estimated_ms = timed.partitions[static_cast<std::size_t>(row.index)].estimated_ms;
  }
  profile.estimated_ms = timed.estimated_ms;
}

// Puts into `profile` (of `plan`, made of `cover`) the estimates of the
// plan's parts timed again now (put_parts_timed). Returns the plan so
// timed; none (and `profile` as it was) when its parts could not be timed
// again.
std::optional<Plan> estimate_with_parts_timed_now(PlanProfile& profile, const Plan& plan,
                                                  const DataflowGraph& dfg,
                                                  const std::vector<ChosenPartition>& cover,
                                                  MeasuringEstimator& estimator) {
  Plan timed = with_parts_timed_now(plan, dfg, cover, estimator);
  if (!timed.search.search_estimated_ms) return std::nullopt;
  put_parts_timed(profile, timed);
  return timed;
}

// `plan` with each partition's estimate moved by what its two timings
// again, `before` and `after` (with_parts_timed_now), settle on
// (settled_change, as `compare` settles a part it times twice).
Plan with_timings_settled(const Plan& plan, const Plan& before, const Plan& after) {
  Plan settled = plan;
  double total = 0;
  for (std::size_t i = 0; i < settled.partitions.size(); ++i) {
    std::optional<double>& estimate = settled.partitions[i].estimated_ms;
    const std::optional<double>& first = before.partitions[i].estimated_ms;
    const std::optional<double>& second = after.partitions[i].estimated_ms;
    if (estimate && first && second) {
      *estimate += settled_change(*estimate, {*first - *estimate, *second - *estimate});
    }
    total += estimate.value_or(0);
  }
  settled.estimated_ms = total;
  return settled;
}

// How many times the kept plan is profiled to fit its charges, and how
// long each profile's untraced runs take at least.
constexpr int kKeptPlanProfiles = 5;
constexpr double kKeptPlanProfileSeconds = 0.2;

// The charges that make the kept plan `plan` (made of `cover`, estimated
// with `charged`) cost what it runs: it is profiled kKeptPlanProfiles
// times, its parts timed again right before and right after each profile
// and the two settled as `compare` settles them (settled_change: a machine
// that changes speed during the profile moves both ends, not one), and
// each backend is charged the median over the profiles of
// overheads_fitting_the_run().
// The charges the search learned came from the plans of the refinement
// rounds, which local moves may replace with one of other partitions: a
// per-partition charge learned on 15 large partitions and charged to 60
// small ones put mobilenet v2's estimate 25% over its runs. The search is
// not run again: these charges are the estimate's, the plan stays as
// found. None when the plan cannot be profiled (reported) or its parts
// cannot be timed again.
std::optional<PartitionOverheads> charges_of_the_kept_plan(
    const Graph& graph, const DataflowGraph& dfg, const Plan& plan,
    const std::vector<ChosenPartition>& cover, const PartitionOverheads& charged,
    const std::map<std::string, Tensor>& inputs, MeasuringEstimator& estimator,
    const PlanningOptions& options) {
  const double run_ms = plan.measured_ms.value_or(plan.estimated_ms.value_or(0));
  const int runs = std::clamp(
      static_cast<int>(std::ceil(kKeptPlanProfileSeconds * 1e3 / std::max(run_ms, 1e-3))),
      options.refine_runs, 100);
  double charges_ms = 0;
  for (const PlanPartition& partition : plan.partitions) {
    charges_ms += charged.of(partition.backend) * 1e3;
  }
  std::vector<PartitionOverheads> fits;
  std::vector<double> run_medians;
  std::vector<double> parts;
  try {
    // The timing after one profile is the one before the next.
    Plan before = with_parts_timed_now(plan, dfg, cover, estimator);
    for (int k = 0; k < kKeptPlanProfiles; ++k) {
      PlanProfile profile = profile_in_context(graph, plan, BackendRegistry::global(),
                                               options.threads, inputs, runs, 2);
      Plan after = with_parts_timed_now(plan, dfg, cover, estimator);
      if (!before.search.search_estimated_ms || !after.search.search_estimated_ms) {
        return std::nullopt;
      }
      const Plan timed = with_timings_settled(plan, before, after);
      put_parts_timed(profile, timed);
      fits.push_back(overheads_fitting_the_run(profile, charged));
      run_medians.push_back(profile.run_median_ms);
      parts.push_back(timed.estimated_ms.value_or(0) - charges_ms);
      before = std::move(after);
    }
  } catch (const Error& e) {
    if (options.progress) {
      options.progress(TuneProgress{
          .stage = TuneProgress::Stage::kRefine,
          .message = fmt::format("the kept plan's charges were not fitted: {}", e.what())});
    }
    return std::nullopt;
  }
  std::vector<std::string> backends;
  for (const PlanPartition& partition : plan.partitions) backends.push_back(partition.backend);
  std::sort(backends.begin(), backends.end());
  backends.erase(std::unique(backends.begin(), backends.end()), backends.end());
  PartitionOverheads fitted = overheads_over_rounds(fits, backends);
  if (options.progress) {
    options.progress(TuneProgress{
        .stage = TuneProgress::Stage::kRefine,
        .message = fmt::format(
            "the kept plan, profiled {} times ({} runs each): ran {:.3f} ms, its parts timed "
            "again {:.3f} ms (medians); charges fitted to its runs: {}",
            kKeptPlanProfiles, runs, percentile(run_medians, 0.5), percentile(parts, 0.5),
            overheads_text(fitted))});
  }
  return fitted;
}

// A measurement a profile contradicts: more than this many times the
// partition's in-context time, and kMinContradictionMs above it. Timed in
// the caches a plan leaves, a candidate alone ran within 6% of its median
// in context (docs/partitioning.md, "Costs in context", point 7); beyond
// a quarter more, the measurement was taken while the machine was slow.
constexpr double kContradictionRatio = 1.25;
constexpr double kMinContradictionMs = 0.005;

// Measures again each partition of `chosen` (the cover `profile` ran, in
// the same order) whose isolated measurement its in-context time
// contradicts, keeping the faster measurement; returns how many.
int remeasure_contradicted(const DataflowGraph& dfg, const std::vector<ChosenPartition>& chosen,
                           const PlanProfile& profile, MeasuringEstimator& estimator) {
  int remeasured = 0;
  for (const PartitionProfile& row : profile.partitions) {
    const auto index = static_cast<std::size_t>(row.index);
    if (index >= chosen.size()) continue;
    const CandidatePartition& candidate = chosen[index].candidate;
    if (candidate.spec->backend == nullptr) continue;
    const Cost alone = estimator.estimate(dfg, candidate);
    if (!alone.is_valid()) continue;
    const double alone_ms = alone.seconds() * 1e3;
    if (alone_ms <= kContradictionRatio * row.in_context_ms + kMinContradictionMs) continue;
    estimator.remeasure(dfg, candidate);
    ++remeasured;
  }
  return remeasured;
}

// Measures again each part of `cover`, the plan of a model tuned before,
// and keeps the new measurements in place of those of the earlier run
// (MeasuringEstimator::refresh), so that the plan's estimate describes the
// machine as it runs now: the cache held resnet50's parts from a slow
// spell, 25% over what the plan ran at hours later, and resnet18's from a
// fast one, 12% under. The plan stays as found. A measurement that fails
// leaves the one before; the failure is reported.
void refresh_parts(const DataflowGraph& dfg, const std::vector<ChosenPartition>& cover,
                   MeasuringEstimator& estimator, const PlanningOptions& options) {
  double before_ms = 0;
  double after_ms = 0;
  int refreshed = 0;
  try {
    for (const ChosenPartition& part : cover) {
      const CandidatePartition& candidate = part.candidate;
      if (candidate.spec->backend == nullptr) continue;
      const Cost before = estimator.estimate(dfg, candidate);
      const Cost after = estimator.refresh(dfg, candidate);
      if (!before.is_valid() || !after.is_valid()) continue;
      before_ms += before.seconds() * 1e3;
      after_ms += after.seconds() * 1e3;
      ++refreshed;
    }
  } catch (const Error& e) {
    if (options.progress) {
      options.progress(TuneProgress{
          .stage = TuneProgress::Stage::kRefine,
          .message = fmt::format("timing the plan's parts again stopped: {}", e.what())});
    }
  }
  if (options.progress && refreshed > 0) {
    options.progress(TuneProgress{
        .stage = TuneProgress::Stage::kRefine,
        .message = fmt::format("tuned before: the plan's {} partitions timed again, {:.3f} ms "
                               "in all ({:.3f} ms when measured before)",
                               refreshed, after_ms, before_ms)});
  }
}

// The covers the baselines run, made of the same specs' candidates and
// estimated alone: `single:<backend>` for each backend of `specs` but the
// native one (the first), and with two or more such backends the greedy
// placement in `specs`' order (`greedy:<backends>`). Local moves may start
// from one of them. A cover with a partition that is invalid when measured
// alone is left out.
std::vector<MoveStart> baseline_starts(const DataflowGraph& dfg,
                                       const std::vector<PartitionSpecPtr>& specs,
                                       CostEstimator& estimator) {
  std::vector<MoveStart> starts;
  auto add = [&](std::string name, const std::vector<PartitionSpecPtr>& priority) {
    std::vector<ChosenPartition> cover =
        with_costs_alone(dfg, greedy_cover(dfg, priority, specs.front()), estimator);
    bool valid = std::all_of(cover.begin(), cover.end(),
                             [](const ChosenPartition& p) { return p.cost.is_valid(); });
    if (valid) starts.push_back({std::move(name), std::move(cover), priority.size() == 1});
  };
  std::vector<std::string> names;
  for (std::size_t i = 1; i < specs.size(); ++i) {
    add("single:" + specs[i]->name, {specs[i]});
    names.push_back(specs[i]->name);
  }
  if (specs.size() > 2) {
    add(fmt::format("greedy:{}", fmt::join(names, ",")), {specs.begin() + 1, specs.end()});
  }
  return starts;
}

// What measures candidates for a collage plan: the measurer (a worker
// process unless options.isolate is off), the measurement cache (none
// with cache_path "none") and the estimator over them, keyed by `machine`.
struct Measuring {
  std::unique_ptr<Measurer> measurer;
  std::unique_ptr<MeasurementCache> cache;
  std::string machine;
  std::unique_ptr<MeasuringEstimator> estimator;
};

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
  if (options.cache_path != "none") {
    measuring.cache = MeasurementCache::open(options.cache_path.empty() ? default_cache_path()
                                                                        : options.cache_path);
  }
  // Measurements and overheads are keyed by the machine and how it measures.
  // The graph optimization level is part of it too, so that plans and
  // measurements made at different levels never mix.
  measuring.machine = measurement_context(machine_text(options.threads), measure_options) +
                      " graph-opt=" + std::string(to_string(options.graph_opt));
  measuring.estimator = std::make_unique<MeasuringEstimator>(
      *measuring.measurer, measuring.cache.get(), measuring.machine);
  ProgressCallback progress = options.progress;
  measuring.estimator->prepare_with(options.threads, [progress](const std::string& line) {
    if (progress) progress(TuneProgress{.stage = TuneProgress::Stage::kCompile, .message = line});
  });
  return measuring;
}

Plan collage_plan(const Graph& graph, const DataflowGraph& dfg, const Strategy& strategy,
                  const PlanningOptions& options) {
  std::vector<const Backend*> backends = resolve_backends(options.backends);
  std::vector<PartitionSpecPtr> specs = make_backend_specs(backends, spec_options(options.search));
  std::vector<std::string> backend_names;
  for (const Backend* backend : backends) backend_names.push_back(backend->name());

  Measuring measuring = open_measuring(options);
  std::unique_ptr<MeasurementCache>& cache = measuring.cache;
  const std::string& machine = measuring.machine;
  MeasuringEstimator& estimator = *measuring.estimator;
  // A model tuned before on this machine is searched once more with the
  // overheads its kept plan was found with (same cache, same plan); a new
  // model starts from the overheads this machine showed last and refines.
  // The model's key carries the backends' versions and code, as every
  // measurement's does: a plan or cover kept for other code is not reused.
  std::string versions;
  for (const Backend* backend : backends) versions += backend_version_key(*backend) + ";";
  const std::string model_hash =
      fmt::format("{}|code {:016x}", structural_hash_hex(graph), fnv1a_64(versions));
  PartitionOverheads overheads;
  PartitionOverheads learned;
  int refine_rounds = options.search.refine_rounds;
  // True when this model was tuned before (its overheads are stored).
  bool known_model = false;
  if (cache) {
    learned = PartitionOverheads::load(*cache, machine, backend_names);
    overheads = learned;
    PartitionOverheads known = PartitionOverheads::load(*cache, machine, backend_names, model_hash);
    if (refine_rounds > 0 && !known.seconds.empty()) {
      overheads = known;
      refine_rounds = 0;
      known_model = true;
      // Estimate with what this model's own profiles taught, when stored.
      PartitionOverheads own =
          PartitionOverheads::load(*cache, machine, backend_names, model_hash + "|learned");
      if (!own.seconds.empty()) learned = own;
    }
  }

  std::map<std::string, Tensor> inputs = random_inputs(graph);
  std::optional<Plan> best;
  // The cover `best` was made of (costs aside).
  std::vector<ChosenPartition> best_partitions;
  PartitionOverheads best_overheads;
  // The best round's search result: where local moves start.
  CollageResult best_result;
  std::string previous_signature;
  // What each profile of this model showed (observed_overheads).
  std::vector<PartitionOverheads> observations;
  double search_seconds = 0;
  // The budget counts from the first profile: measuring the candidates is
  // not refinement.
  std::optional<std::chrono::steady_clock::time_point> refine_start;
  auto over = [&](double share) {
    return refine_start &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - *refine_start).count() >
               share * options.search.budget_seconds;
  };
  auto over_budget = [&] { return over(1.0); };
  // The rounds start no new round after half the budget, so that the local
  // moves always get a share of it: on a large model (maxvit_t, 1500 nodes)
  // three rounds of search and profiling took the whole default budget and
  // no move was tried.
  auto rounds_over_budget = [&] { return options.search.local_moves ? over(0.5) : over(1.0); };
  // Layout conversions at boundaries, measured once per machine and shape.
  ConversionCosts conversions(cache.get(), machine, options.threads);
  LayoutBoundaryCosts boundaries(backends, conversions);
  BoundaryCosts* boundaries_or_null = options.search.boundary_costs ? &boundaries : nullptr;
  // The local moves kept for this model, machine and search space ("4":
  // moves that may start from a single-backend cover or the greedy one, a
  // tie going to the single-backend cover).
  const std::string moves_key =
      fmt::format("local moves 4|{}|{}|{}|depth={} exits={} boundaries={}", model_hash, machine,
                  fmt::join(backend_names, ","), options.search.max_depth, options.search.max_exits,
                  options.search.boundary_costs);
  // The plan of a cover (boundary charges included) found by `result`'s search.
  auto plan_of = [&](const std::vector<ChosenPartition>& partitions, const CollageResult& result) {
    Plan plan = build_plan(dfg, partitions, plan_context(strategy, options), result.candidates);
    for (const Backend* backend : backends) {
      plan.backend_versions[backend->name()] = backend->version();
    }
    const EstimatorCounters& c = estimator.counters();
    plan.search.candidates = static_cast<int>(result.candidates.size());
    plan.search.measured = c.measured;
    plan.search.cache_hits = c.cache_hits;
    plan.search.invalid = c.invalid;
    plan.search.states_expanded = static_cast<int>(result.search.stats.states_expanded);
    plan.search.routes_dropped = static_cast<int>(result.search.stats.routes_dropped);
    plan.search.seconds = search_seconds;
    return plan;
  };
  for (int round = 0;; ++round) {
    InContextEstimator in_context(estimator, overheads);
    auto report = [&](std::size_t done, std::size_t total, bool finished) {
      if (!options.progress || round > 0) return;
      const EstimatorCounters& c = estimator.counters();
      options.progress(TuneProgress{.stage = TuneProgress::Stage::kCandidates,
                                    .done = done,
                                    .total = total,
                                    .measured = c.measured,
                                    .cache_hits = c.cache_hits,
                                    .invalid = c.invalid,
                                    .finished = finished});
    };
    CollageOptions collage_options;
    collage_options.prune = options.prune;
    collage_options.boundaries = boundaries_or_null;
    collage_options.progress = [&](std::size_t done, std::size_t total, const CandidatePartition&,
                                   const Cost&) { report(done, total, false); };
    CollageResult result = collage_partition(dfg, specs, in_context, collage_options);
    search_seconds += result.seconds;
    report(result.candidates.size(), result.candidates.size(), true);

    Plan plan = plan_of(result.search.partitions, result);
    if (round >= refine_rounds) {
      if (best) break;
      // Searched once: the local moves kept when the model was tuned with
      // these overheads apply again, without measuring them again.
      if (cache && options.search.local_moves) {
        if (std::optional<CachedMeasurement> stored = cache->find(moves_key)) {
          if (auto cover = cover_from_text(dfg, specs, stored->reason, in_context)) {
            if (known_model) {
              refresh_parts(dfg, *cover, estimator, options);
              *cover = with_costs_alone(dfg, std::move(*cover), in_context);
            }
            plan = plan_of(with_boundary_charges(dfg, *cover, boundaries_or_null), result);
            return with_estimates_in_context(plan, overheads, learned);
          }
        }
      }
      // A model tuned before without these moves (or by an older version of
      // them) gets them now, from the plan its stored overheads give.
      if (!known_model) return with_estimates_in_context(plan, overheads, learned);
      if (!options.search.local_moves) {
        refresh_parts(dfg, result.search.partitions, estimator, options);
        plan = plan_of(
            with_boundary_charges(dfg, with_costs_alone(dfg, result.search.partitions, in_context),
                                  boundaries_or_null),
            result);
        return with_estimates_in_context(plan, overheads, learned);
      }
      refine_start = std::chrono::steady_clock::now();
      best = plan;
      best_partitions = result.search.partitions;
      best_overheads = overheads;
      best_result = result;
      break;
    }

    std::string signature = plan.partitions_signature();
    if (best && (signature == previous_signature || rounds_over_budget())) break;
    previous_signature = signature;
    if (!refine_start) refine_start = std::chrono::steady_clock::now();
    PlanProfile profile = profile_in_context(graph, plan, BackendRegistry::global(),
                                             options.threads, inputs, options.refine_runs, 2);
    plan.measured_ms = profile.run_median_ms;
    const std::optional<Plan> timed =
        estimate_with_parts_timed_now(profile, plan, dfg, result.search.partitions, estimator);
    const bool timed_now = timed.has_value();
    if (options.progress) {
      options.progress(TuneProgress{
          .stage = TuneProgress::Stage::kRefine,
          .done = static_cast<std::size_t>(round + 1),
          .total = static_cast<std::size_t>(refine_rounds),
          .finished = round + 1 == refine_rounds,
          .message = fmt::format(
              "in context, round {}: {} partitions, estimated {:.3f} ms{}, measured {:.3f} ms "
              "(overheads charged: {})",
              round + 1, plan.partitions.size(), plan.estimated_ms.value_or(0),
              timed_now ? fmt::format(" ({:.3f} with its parts timed again)",
                                      timed->estimated_ms.value_or(0))
                        : "",
              profile.run_median_ms, overheads_text(overheads))});
    }
    if (!best || *plan.measured_ms < *best->measured_ms) {
      best = plan;
      best_partitions = result.search.partitions;
      best_overheads = overheads;
      best_result = result;
    }
    const int remeasured =
        remeasure_contradicted(dfg, result.search.partitions, profile, estimator);
    if (remeasured > 0 && options.progress) {
      options.progress(TuneProgress{
          .stage = TuneProgress::Stage::kRefine,
          .message = fmt::format("in context, round {}: {} partitions ran more than {:g}x faster "
                                 "than measured alone; measured again",
                                 round + 1, remeasured, kContradictionRatio)});
    }
    // Each profile's observation replaces what other models taught; the
    // charge is the median over this model's profiles.
    observations.push_back(observed_overheads(
        profile, overheads, timed_now ? PartsTimed::kWithProfile : PartsTimed::kWhenSearched));
    overheads = overheads_over_rounds(observations, backend_names);
    learned = overheads;
    if (cache) learned.store(*cache, machine);
  }
  for (const std::string& name : backend_names) best_overheads.seconds.emplace(name, 0.0);
  if (options.search.local_moves && !over_budget()) {
    // Moves only improve a plan that is already found: a failure while
    // making them is reported and the searched plan kept.
    try {
      InContextEstimator in_context(estimator, best_overheads);
      std::vector<MoveStart> starts = {
          {"searched", with_costs_alone(dfg, best_result.search.partitions, in_context)}};
      for (MoveStart& start : baseline_starts(dfg, specs, in_context)) {
        starts.push_back(std::move(start));
      }
      const double searched_ms = total_cost(starts.front().partitions).seconds() * 1e3;
      for (const auto& [name, ms] : drop_implausible_starts(starts, kMaxStartEstimateRatio)) {
        if (!options.progress) continue;
        options.progress(TuneProgress{
            .stage = TuneProgress::Stage::kRefine,
            .message = fmt::format("start {} not timed: estimated {:.3f} ms, over {:g}x the "
                                   "searched plan's {:.3f} ms",
                                   name, ms, kMaxStartEstimateRatio, searched_ms)});
      }
      MoveRefinementOptions move_options;
      move_options.threads = options.threads;
      move_options.out_of_time = over_budget;
      if (options.progress) {
        move_options.report = [&](const std::string& line) {
          options.progress(TuneProgress{.stage = TuneProgress::Stage::kRefine, .message = line});
        };
      }
      MoveRefinement refined = refine_by_moves(
          graph, dfg, starts, best_result.candidates, in_context, boundaries_or_null,
          [&](const std::vector<ChosenPartition>& partitions) {
            return plan_of(partitions, best_result);
          },
          inputs, move_options);
      if (refined.kept > 0 || refined.start != starts.front().name) {
        best_partitions = refined.partitions;
        best = plan_of(with_boundary_charges(dfg, refined.partitions, boundaries_or_null),
                       best_result);
        best->measured_ms = refined.measured_ms;
      }
      best->search.moves_tried = refined.tried;
      best->search.moves_kept = refined.kept;
      best->search.moves_start = refined.start;
      if (cache) {
        cache->store(moves_key, CachedMeasurement{.valid = true,
                                                  .reason = cover_to_text(refined.partitions),
                                                  .machine = machine});
      }
    } catch (const Error& e) {
      if (options.progress) {
        options.progress(TuneProgress{.stage = TuneProgress::Stage::kRefine,
                                      .message = fmt::format("local moves stopped: {}", e.what())});
      }
    }
  }
  if (known_model) refresh_parts(dfg, best_partitions, estimator, options);
  if (estimator.counters().remeasured > 0) {
    // Its estimates were made before some measurements were taken again.
    InContextEstimator in_context(estimator, best_overheads);
    Plan again =
        plan_of(with_boundary_charges(dfg, with_costs_alone(dfg, best_partitions, in_context),
                                      boundaries_or_null),
                best_result);
    again.measured_ms = best->measured_ms;
    again.search = best->search;
    best = std::move(again);
  }
  best->search.seconds = search_seconds;
  if (options.search.refine_rounds > 0) {
    if (std::optional<PartitionOverheads> fitted = charges_of_the_kept_plan(
            graph, dfg, *best, best_partitions, best_overheads, inputs, estimator, options)) {
      learned = *fitted;
    }
  }
  if (cache) {
    best_overheads.store(*cache, machine, model_hash);
    learned.store(*cache, machine, model_hash + "|learned");
  }
  return with_estimates_in_context(*best, best_overheads, learned);
}

// The native strategy: the whole model as one native partition, so the
// native backend fuses across the whole graph and no boundary is crossed.
Plan whole_graph_plan(const DataflowGraph& dfg, const Backend& native, const Strategy& strategy,
                      const PlanningOptions& options) {
  IndexSet operators = IndexSet::all(dfg.size()) - dfg.host_set();
  PartitionSpecPtr spec = make_backend_spec(native, spec_options(options.search));
  CandidatePartition whole{SubGraph(dfg, operators, "whole graph"), spec, "whole-graph"};
  Plan plan =
      build_plan(dfg, {ChosenPartition{whole, Cost::zero()}}, plan_context(strategy, options));
  plan.backend_versions[native.name()] = native.version();
  return plan;
}

}  // namespace

void check_search_settings(const SearchSettings& settings) {
  if (settings.refine_rounds < 0 || settings.refine_rounds > 20) {
    throw Error("must be between 0 and 20", {.field = "--refine-rounds"});
  }
  if (settings.max_depth < 1 || settings.max_depth > 64) {
    throw Error("must be between 1 and 64", {.field = "--max-depth"});
  }
  if (settings.max_exits < 1 || settings.max_exits > 16) {
    throw Error("must be between 1 and 16", {.field = "--max-exits"});
  }
  if (!(settings.budget_seconds >= 0) || settings.budget_seconds > 86400) {
    throw Error("must be between 0 and 86400 seconds", {.field = "--budget"});
  }
}

std::string worker_executable() {
  if (const char* given = std::getenv("COLLAGE_WORKER"); given && *given) {
    if (!is_executable_file(given)) {
      throw Error("is not an executable file", {.file = given, .field = "COLLAGE_WORKER"});
    }
    return given;
  }
  std::filesystem::path self = self_executable();
  if (self.filename() == "collage") return self.string();
  std::vector<std::filesystem::path> places;
  if (std::filesystem::path code = this_code_file(); !code.empty()) {
    places.push_back(code.parent_path() / "collage");
    places.push_back(code.parent_path().parent_path() / "bin" / "collage");
  }
#ifdef COLLAGE_BUILD_TOOL
  places.emplace_back(COLLAGE_BUILD_TOOL);
#endif
  for (const std::filesystem::path& place : places) {
    if (is_executable_file(place)) return place.string();
  }
  throw Error(
      "cannot find the `collage` executable that measures candidates in isolation; set "
      "COLLAGE_WORKER to its path, or measure in this process");
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
  std::vector<const Backend*> backends = {&registry.native()};
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
  if (strategy.kind == Strategy::Kind::kCollage) return collage_plan(graph, dfg, strategy, options);

  const Backend& native = BackendRegistry::global().native();
  if (strategy.kind == Strategy::Kind::kNative)
    return whole_graph_plan(dfg, native, strategy, options);
  PartitionSpecPtr fallback = make_backend_spec(native, spec_options(options.search));
  std::vector<PartitionSpecPtr> priority;
  for (const Backend* backend : resolve_backends(strategy.backends)) {
    if (backend != &native)
      priority.push_back(make_backend_spec(*backend, spec_options(options.search)));
  }
  std::vector<ChosenPartition> chosen = greedy_cover(dfg, priority, fallback);
  Plan plan = build_plan(dfg, chosen, plan_context(strategy, options));
  for (const PartitionSpecPtr& spec : priority) {
    plan.backend_versions[spec->name] = spec->backend->version();
  }
  plan.backend_versions[native.name()] = native.version();
  return plan;
}

struct PartsTimer::State {
  explicit State(const Graph& graph) : dfg(graph) {}
  DataflowGraph dfg;
  Measuring measuring;
  // Per partition of the plan: its candidate, when its nodes are found.
  std::vector<std::optional<CandidatePartition>> candidates;
};

PartsTimer::PartsTimer(const Graph& graph, const Plan& plan, const PlanningOptions& options)
    : state_(std::make_unique<State>(graph)) {
  state_->measuring = open_measuring(options);
  std::vector<PartitionSpecPtr> specs =
      make_backend_specs(resolve_backends(options.backends), spec_options(options.search));
  std::vector<CandidatePartition> known;
  for (const PlanPartition& partition : plan.partitions) {
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const PartitionSpecPtr& s) {
      return s->name == partition.backend;
    });
    IndexSet inside = state_->dfg.empty_set();
    bool found = spec != specs.end() && !partition.nodes.empty();
    for (const std::string& name : partition.nodes) {
      std::optional<NodeId> node = graph.find_node(name);
      if (!node) {
        found = false;
        break;
      }
      inside.add(state_->dfg.index_of_node(*node));
    }
    if (!found) {
      state_->candidates.emplace_back();
      continue;
    }
    CandidatePartition candidate{SubGraph(state_->dfg, inside), *spec, partition.rule};
    known.push_back(candidate);
    state_->candidates.emplace_back(std::move(candidate));
  }
  state_->measuring.estimator->prepare(state_->dfg, known);
}

PartsTimer::~PartsTimer() = default;

double settled_change(double estimate_ms, const std::vector<double>& changes) {
  const auto [low, high] = std::minmax_element(changes.begin(), changes.end());
  if (estimate_ms + *high > 1.5 * (estimate_ms + *low)) return *low;
  double sum = 0;
  for (double change : changes) sum += change;
  return sum / static_cast<double>(changes.size());
}

std::size_t PartsTimer::size() const { return state_->candidates.size(); }

std::optional<double> PartsTimer::change_now(std::size_t index) {
  const std::optional<CandidatePartition>& candidate = state_->candidates.at(index);
  if (!candidate) return std::nullopt;
  return change_now_ms(*state_->measuring.estimator, state_->dfg, *candidate);
}

}  // namespace collage
