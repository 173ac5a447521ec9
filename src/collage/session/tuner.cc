#include "collage/session/tuner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "collage/backends/registry.h"
#include "collage/backends/search_layout.h"
#include "collage/cost/cache_keys.h"
#include "collage/cost/overhead_learning.h"
#include "collage/ir/error.h"
#include "collage/ir/structural_hash.h"
#include "collage/plan/plan_builder.h"
#include "collage/runtime/random_inputs.h"
#include "collage/runtime/timing.h"
#include "collage/search/local_moves.h"
#include "collage/search/regions.h"
#include "collage/session/parts_retiming.h"

namespace collage {
namespace {

// How many times the kept plan is profiled to fit its charges, and how
// long each profile's untraced runs take at least. A fit that has taken
// PlanningOptions::fit_seconds stops after kKeptPlanMinProfiles: on a large
// model each retiming of every part takes seconds (ViT-B/16, 196
// partitions: about 10 s, a fit of five profiles 73-95 s, four fits 64 % of
// a tune from a warm cache), while a small model's fit stays at five.
constexpr int kKeptPlanProfiles = 5;
constexpr int kKeptPlanMinProfiles = 3;
constexpr double kKeptPlanProfileSeconds = 0.2;

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

// The covers the baselines run, made of the same specs' candidates merged
// into regions (search/regions.h) and estimated alone: `single:<backend>`
// for each backend of `specs` but the native one (the first), and with two
// or more such backends the greedy placement in `specs`' order
// (`greedy:<backends>`). Local moves may start from one of them. A cover
// with a partition that is invalid when measured alone is left out. Nodes
// pinned to a backend a baseline does not name go to that backend first,
// as in the baselines' own plans (session/planning.cc). Each partition is
// costed at `fidelity` (CostEstimator::bound): a screen tells a start that
// cannot compete as well as a measurement does.
std::vector<MoveStart> baseline_starts(const DataflowGraph& dfg,
                                       const std::vector<PartitionSpecPtr>& specs,
                                       const Placement& placement, CostEstimator& estimator,
                                       Fidelity fidelity) {
  // Every cover first, so that the estimator measures their partitions
  // together (prepare(): kernels compiled ahead, jobs for a fleet).
  std::vector<MoveStart> starts;
  auto add = [&](std::string name, const std::vector<PartitionSpecPtr>& named) {
    std::vector<PartitionSpecPtr> priority =
        placement.baseline_priority(specs, named, specs.front()->name);
    try {
      starts.push_back({std::move(name),
                        merge_into_regions(dfg, greedy_cover(dfg, priority, specs.front())),
                        named.size() == 1});
    } catch (const Error&) {
      // Under placement constraints a baseline may leave a node nothing it
      // names may run (native avoided for it): no start.
      if (placement.empty()) throw;
    }
  };
  std::vector<std::string> names;
  for (std::size_t i = 1; i < specs.size(); ++i) {
    add("single:" + specs[i]->name, {specs[i]});
    names.push_back(specs[i]->name);
  }
  if (specs.size() > 2) {
    add(fmt::format("greedy:{}", fmt::join(names, ",")), {specs.begin() + 1, specs.end()});
  }
  std::vector<CandidatePartition> candidates;
  for (const MoveStart& start : starts) {
    for (const ChosenPartition& p : start.partitions) candidates.push_back(p.candidate);
  }
  estimator.prepare(dfg, candidates);
  // A cover with a partition that is invalid alone is no start.
  std::vector<MoveStart> valid;
  for (MoveStart& start : starts) {
    start.partitions = with_costs_alone(dfg, std::move(start.partitions), estimator, fidelity);
    if (std::all_of(start.partitions.begin(), start.partitions.end(),
                    [](const ChosenPartition& p) { return p.cost.is_valid(); })) {
      valid.push_back(std::move(start));
    }
  }
  return valid;
}

// The backends of `plan`'s partitions, each once, sorted.
std::vector<std::string> backends_of(const Plan& plan) {
  std::vector<std::string> backends;
  for (const PlanPartition& partition : plan.partitions) backends.push_back(partition.backend);
  std::sort(backends.begin(), backends.end());
  backends.erase(std::unique(backends.begin(), backends.end()), backends.end());
  return backends;
}

}  // namespace

Tuner::Tuner(const Graph& graph, const DataflowGraph& dfg, const Strategy& strategy,
             const PlanningOptions& options)
    : graph_(graph),
      dfg_(dfg),
      strategy_(strategy),
      options_(options),
      backends_(
          in_search_layout(resolve_backends(options.backends), options.search_layout, in_layout_)),
      specs_(planning_specs(backends_, options)),
      measuring_(open_measuring(options)),
      model_(model_key(graph, backends_)),
      fitted_model_(options.search_layout
                        ? model_ + "|layout " + edge_layout_name(*options.search_layout)
                        : model_),
      refine_rounds_(options.search.refine_rounds),
      inputs_(random_inputs(graph)),
      conversions_(measuring_.cache.get(), measuring_.machine, options.threads),
      boundaries_(backends_, conversions_),
      boundaries_or_null_(options.search.boundary_costs ? &boundaries_ : nullptr) {
  for (const Backend* backend : backends_) backend_names_.push_back(backend->name());
  // A cover kept under placement constraints is kept for those alone.
  std::string constrained_model = model_;
  if (options.search_layout)
    constrained_model += "|layout " + edge_layout_name(*options.search_layout);
  if (!options.placement.empty()) {
    constrained_model +=
        fmt::format("|placement {:016x}",
                    fnv1a_64(fmt::format("{}", fmt::join(options.placement.describe(), "\n"))));
  }
  moves_key_ = local_moves_key(constrained_model, measuring_.machine, backend_names_,
                               options.search.max_depth, options.search.max_exits,
                               options.search.boundary_costs);
}

Plan Tuner::run() {
  load_learned_state();
  for (int round = 0;; ++round) {
    // After the last round the best profiled plan stands: a search whose
    // plan nobody profiles would only measure (the new members of its
    // cover, when screening).
    if (round >= refine_rounds_ && best_) break;
    CollageResult result = search(round);
    Plan plan = plan_of(result.search.partitions, result);
    if (round >= refine_rounds_) {
      if (std::optional<Plan> done = plan_without_refining(plan, result)) return *done;
      break;
    }
    const std::string signature = plan.partitions_signature();
    // The rounds start no new round after half the budget, so that the
    // local moves always get a share of it: on a large model (maxvit_t,
    // 1500 nodes) three rounds of search and profiling took the whole
    // default budget and no move was tried.
    const bool rounds_over_budget = over(options_.search.local_moves ? 0.5 : 1.0);
    if (best_ && (signature == previous_signature_ || rounds_over_budget)) break;
    previous_signature_ = signature;
    profile_round(round, std::move(plan), result);
  }
  for (const std::string& name : backend_names_) best_->overheads.seconds.emplace(name, 0.0);
  if (options_.search.local_moves && !over(1.0)) refine_by_local_moves();
  settle_kept_plan();
  store_learned_state();
  return with_estimates_in_context(best_->plan, best_->overheads, learned_);
}

std::optional<std::vector<ChosenPartition>> Tuner::cover_of(const Plan& plan) {
  std::vector<ChosenPartition> cover;
  std::vector<CandidatePartition> candidates;
  for (std::optional<CandidatePartition>& candidate : plan_candidates(dfg_, specs_, plan)) {
    if (!candidate) return std::nullopt;
    candidates.push_back(*candidate);
    cover.push_back(ChosenPartition{std::move(*candidate), Cost::zero()});
  }
  MeasuringEstimator& estimator = *measuring_.estimator;
  estimator.prepare(dfg_, candidates);
  // As the searched plan of a model tuned before: its parts found in the
  // cache are timed again, so that the estimate describes the machine as
  // it runs now (a part measured just now needs no second timing).
  if (known_model_) {
    std::vector<ChosenPartition> cached;
    for (const ChosenPartition& part : cover) {
      const int measured = estimator.counters().measured;
      estimator.estimate(dfg_, part.candidate);
      if (estimator.counters().measured == measured) cached.push_back(part);
    }
    retime_parts_kept(dfg_, cached, estimator, options_.progress);
  }
  InContextEstimator in_context(estimator, learned_);
  cover = with_boundary_charges(dfg_, with_costs_alone(dfg_, std::move(cover), in_context),
                                boundaries_or_null_);
  for (const ChosenPartition& part : cover) {
    if (!part.cost.is_valid()) return std::nullopt;
  }
  return cover;
}

Plan Tuner::with_costs_of(Plan plan, const std::vector<ChosenPartition>& cover) {
  double total = 0;
  for (std::size_t i = 0; i < cover.size(); ++i) {
    const double ms = cost_ms(cover[i].cost).value_or(0);
    plan.partitions[i].estimated_ms = ms;
    total += ms;
  }
  plan.estimated_ms = total;
  return plan;
}

std::optional<Plan> Tuner::estimate(const Plan& plan) {
  load_learned_state();
  std::optional<std::vector<ChosenPartition>> cover = cover_of(plan);
  if (!cover) return std::nullopt;
  return with_costs_of(plan, *cover);
}

std::optional<Plan> Tuner::estimate_fitted(const Plan& plan) {
  load_learned_state();
  std::optional<std::vector<ChosenPartition>> cover = cover_of(plan);
  if (!cover) return std::nullopt;
  Plan estimated = with_costs_of(plan, *cover);
  best_ = Best{estimated, *cover, learned_, CollageResult{}};
  std::optional<PartitionOverheads> fitted = charges_of_kept_plan();
  if (!fitted) return estimated;
  estimated = with_estimates_in_context(std::move(estimated), learned_, *fitted);
  learned_ = *fitted;
  if (measuring_.cache) {
    learned_.store(*measuring_.cache, measuring_.machine, model_overheads_learned(fitted_model_));
  }
  return estimated;
}

// A model tuned before on this machine is searched once more with the
// overheads its kept plan was found with (same cache, same plan); a new
// model starts from the overheads this machine showed last and refines.
void Tuner::load_learned_state() {
  if (!measuring_.cache) return;
  const MeasurementCache& cache = *measuring_.cache;
  const std::string& machine = measuring_.machine;
  learned_ = PartitionOverheads::load(cache, machine, backend_names_);
  overheads_ = learned_;
  PartitionOverheads known = PartitionOverheads::load(cache, machine, backend_names_, model_);
  if (refine_rounds_ == 0 || known.seconds.empty()) return;
  overheads_ = known;
  refine_rounds_ = 0;
  known_model_ = true;
  // Estimate with what this model's own profiles taught, when stored.
  // In a layout none were fitted in yet, those of its own layout are the
  // model's nearest (the machine's, learned on other models, charged a
  // 30 us mel spectrogram's seven partitions 0.07 ms).
  for (const std::string& key : {fitted_model_, model_}) {
    PartitionOverheads own =
        PartitionOverheads::load(cache, machine, backend_names_, model_overheads_learned(key));
    if (own.seconds.empty()) continue;
    learned_ = own;
    break;
  }
}

CollageResult Tuner::search(int round) {
  MeasuringEstimator& estimator = *measuring_.estimator;
  const bool screen = screening();
  InContextEstimator in_context(estimator, overheads_);
  auto report_candidates = [&](std::size_t done, std::size_t total, bool finished) {
    if (!options_.progress || round > 0) return;
    const EstimatorCounters& c = estimator.counters();
    options_.progress(TuneProgress{
        .stage = TuneProgress::Stage::kCandidates,
        .done = done,
        .total = total,
        .measured = c.measured,
        .cache_hits = c.cache_hits,
        .invalid = c.invalid,
        .finished = finished,
        .message = screen ? fmt::format("screened {}  measured {}  cached {}  invalid {}",
                                        c.screened, c.measured, c.cache_hits, c.invalid)
                          : ""});
  };
  CollageOptions collage_options;
  collage_options.screen = screen;
  collage_options.prune = options_.prune;
  collage_options.boundaries = boundaries_or_null_;
  collage_options.progress = [&](std::size_t done, std::size_t total, const CandidatePartition&,
                                 const Cost&) { report_candidates(done, total, false); };
  CollageResult result = collage_partition(dfg_, specs_, in_context, collage_options);
  search_seconds_ += result.seconds;
  const std::size_t run = result.candidates.size() - result.left_bounded;
  report_candidates(screen ? run : result.candidates.size(), result.candidates.size(), true);
  return result;
}

std::optional<Plan> Tuner::plan_without_refining(const Plan& plan, const CollageResult& result) {
  // Searched once: the local moves kept when the model was tuned with
  // these overheads apply again, without measuring them again.
  if (options_.search.local_moves) {
    if (std::optional<Plan> replayed = replay_kept_moves(result)) return replayed;
  }
  // A model tuned before without these moves (or by an older version of
  // them) gets them now, from the plan its stored overheads give.
  if (!known_model_) return with_estimates_in_context(plan, overheads_, learned_);
  if (!options_.search.local_moves) {
    retime_parts_kept(dfg_, result.search.partitions, *measuring_.estimator, options_.progress);
    return with_estimates_in_context(
        plan_costed_alone(result.search.partitions, result, overheads_), overheads_, learned_);
  }
  refine_start_ = std::chrono::steady_clock::now();
  best_ = Best{plan, result.search.partitions, overheads_, result};
  return std::nullopt;
}

std::optional<Plan> Tuner::replay_kept_moves(const CollageResult& result) {
  if (!measuring_.cache) return std::nullopt;
  std::optional<CachedMeasurement> stored = measuring_.cache->find(moves_key_);
  if (!stored) return std::nullopt;
  InContextEstimator in_context(*measuring_.estimator, overheads_);
  auto cover = cover_from_text(dfg_, specs_, stored->reason, in_context);
  if (!cover) return std::nullopt;
  if (known_model_) {
    retime_parts_kept(dfg_, *cover, *measuring_.estimator, options_.progress);
    *cover = with_costs_alone(dfg_, std::move(*cover), in_context);
  }
  Plan plan = plan_of(with_boundary_charges(dfg_, *cover, boundaries_or_null_), result);
  return with_estimates_in_context(plan, overheads_, learned_);
}

void Tuner::profile_round(int round, Plan plan, const CollageResult& result) {
  MeasuringEstimator& estimator = *measuring_.estimator;
  if (!refine_start_) refine_start_ = std::chrono::steady_clock::now();
  PlanProfile profile = profile_in_context(graph_, plan, BackendRegistry::global(),
                                           options_.threads, inputs_, options_.refine_runs, 2);
  plan.measured_ms = profile.run_median_ms;
  const std::optional<Plan> retimed =
      retime_into_profile(profile, plan, dfg_, result.search.partitions, estimator);
  report_round(round, plan, profile, retimed);
  if (!best_ || *plan.measured_ms < *best_->plan.measured_ms) {
    best_ = Best{plan, result.search.partitions, overheads_, result};
  }
  const int contradicted = retime_contradicted(dfg_, result.search.partitions, profile, estimator);
  if (contradicted > 0) {
    report(
        fmt::format("in context, round {}: {} partitions ran more than {:g}x faster than "
                    "measured alone; measured again",
                    round + 1, contradicted, kContradictionRatio));
  }
  // Each profile's observation replaces what other models taught; the
  // charge is the median over this model's profiles.
  observations_.push_back(
      observed_overheads(as_plan_run(profile), overheads_,
                         retimed ? PartsTimed::kWithProfile : PartsTimed::kWhenSearched));
  overheads_ = overheads_over_rounds(observations_, backend_names_);
  learned_ = overheads_;
  if (measuring_.cache) learned_.store(*measuring_.cache, measuring_.machine);
}

void Tuner::report_round(int round, const Plan& plan, const PlanProfile& profile,
                         const std::optional<Plan>& retimed) {
  if (!options_.progress) return;
  options_.progress(TuneProgress{
      .stage = TuneProgress::Stage::kRefine,
      .done = static_cast<std::size_t>(round + 1),
      .total = static_cast<std::size_t>(refine_rounds_),
      .finished = round + 1 == refine_rounds_,
      .message = fmt::format(
          "in context, round {}: {} partitions, estimated {:.3f} ms{}, measured {:.3f} ms "
          "(overheads charged: {})",
          round + 1, plan.partitions.size(), plan.estimated_ms.value_or(0),
          retimed ? fmt::format(" ({:.3f} with its parts timed again)",
                                retimed->estimated_ms.value_or(0))
                  : "",
          profile.run_median_ms, overheads_text(overheads_))});
}

// Moves only improve a plan that is already found: a failure while making
// them is reported and the searched plan kept.
void Tuner::refine_by_local_moves() {
  try {
    InContextEstimator in_context(*measuring_.estimator, best_->overheads);
    std::vector<MoveStart> starts = move_starts(in_context);
    MoveRefinementOptions move_options;
    move_options.threads = options_.threads;
    move_options.out_of_time = [this] { return over(1.0); };
    // A move is timed end to end: its new partitions need only be screened.
    if (screening()) move_options.added_fidelity = Fidelity::kScreened;
    if (options_.progress) move_options.report = [this](const std::string& line) { report(line); };
    const CollageResult& result = best_->result;
    MoveRefinement refined = refine_by_moves(
        graph_, dfg_, starts, result.candidates, in_context, boundaries_or_null_,
        [&](const std::vector<ChosenPartition>& partitions) { return plan_of(partitions, result); },
        inputs_, move_options);
    if (refined.kept > 0 || refined.start != starts.front().name) {
      best_->partitions = refined.partitions;
      best_->plan =
          plan_of(with_boundary_charges(dfg_, refined.partitions, boundaries_or_null_), result);
      best_->plan.measured_ms = refined.measured_ms;
    }
    best_->plan.search.moves_tried = refined.tried;
    best_->plan.search.moves_kept = refined.kept;
    best_->plan.search.moves_start = refined.start;
    if (measuring_.cache) {
      measuring_.cache->store(moves_key_,
                              CachedMeasurement{.valid = true,
                                                .reason = cover_to_text(refined.partitions),
                                                .machine = measuring_.machine});
    }
  } catch (const Error& e) {
    report(fmt::format("local moves stopped: {}", e.what()));
  }
}

// Where the moves may start: the searched cover, then the baselines' that
// are plausible (drop_implausible_starts).
std::vector<MoveStart> Tuner::move_starts(InContextEstimator& in_context) {
  std::vector<MoveStart> starts = {
      {"searched", with_costs_alone(dfg_, best_->result.search.partitions, in_context)}};
  // Screened: each plausible start is timed end to end.
  const Fidelity fidelity = screening() ? Fidelity::kScreened : Fidelity::kExact;
  for (MoveStart& start : baseline_starts(dfg_, specs_, options_.placement, in_context, fidelity)) {
    starts.push_back(std::move(start));
  }
  const double searched_ms = total_cost(starts.front().partitions).seconds() * 1e3;
  for (const auto& [name, ms] : drop_implausible_starts(starts, kMaxStartEstimateRatio)) {
    report(
        fmt::format("start {} not timed: estimated {:.3f} ms, over {:g}x the searched "
                    "plan's {:.3f} ms",
                    name, ms, kMaxStartEstimateRatio, searched_ms));
  }
  return starts;
}

bool Tuner::screening() const {
  // A fleet measures in batches, in full (session/fleet.h).
  return options_.search.screen && !options_.remote_workers;
}

void Tuner::settle_kept_plan() {
  MeasuringEstimator& estimator = *measuring_.estimator;
  if (known_model_) retime_parts_kept(dfg_, best_->partitions, estimator, options_.progress);
  if (estimator.counters().retimed > 0) {
    // Its estimates were made before some measurements were taken again.
    Plan again = plan_costed_alone(best_->partitions, best_->result, best_->overheads);
    again.measured_ms = best_->plan.measured_ms;
    again.search = best_->plan.search;
    best_->plan = std::move(again);
  }
  best_->plan.search.seconds = search_seconds_;
  if (options_.search.refine_rounds > 0) {
    if (std::optional<PartitionOverheads> fitted = charges_of_kept_plan()) learned_ = *fitted;
  }
}

// The kept plan is profiled kKeptPlanProfiles times (kKeptPlanMinProfiles
// once the fit has taken options_.fit_seconds), its parts retimed
// right before and right after each profile and the two settled as
// `compare` settles them (settled_retiming: a machine that changes speed
// during the profile moves both ends, not one), and each backend is charged
// the median over the profiles of overheads_fitting_the_run().
// The charges the search learned came from the plans of the refinement
// rounds, which local moves may replace with one of other partitions: a
// per-partition charge learned on 15 large partitions and charged to 60
// small ones put mobilenet v2's estimate 25% over its runs. The search is
// not run again: these charges are the estimate's, the plan stays as found.
std::optional<PartitionOverheads> Tuner::charges_of_kept_plan() {
  const Plan& plan = best_->plan;
  const PartitionOverheads& charged = best_->overheads;
  MeasuringEstimator& estimator = *measuring_.estimator;
  const double run_ms = plan.measured_ms.value_or(plan.estimated_ms.value_or(0));
  const int runs = std::clamp(
      static_cast<int>(std::ceil(kKeptPlanProfileSeconds * 1e3 / std::max(run_ms, 1e-3))),
      options_.refine_runs, 100);
  double charges_ms = 0;
  for (const PlanPartition& partition : plan.partitions) {
    charges_ms += charged.of(partition.backend) * 1e3;
  }
  std::vector<PartitionOverheads> fits;
  std::vector<double> run_medians;
  std::vector<double> parts;
  try {
    // The retiming after one profile is the one before the next.
    const auto started = std::chrono::steady_clock::now();
    Plan before = with_parts_retimed(plan, dfg_, best_->partitions, estimator);
    for (int k = 0; k < kKeptPlanProfiles; ++k) {
      if (k >= kKeptPlanMinProfiles && seconds_since(started) >= options_.fit_seconds) break;
      PlanProfile profile = profile_in_context(graph_, plan, BackendRegistry::global(),
                                               options_.threads, inputs_, runs, 2);
      Plan after = with_parts_retimed(plan, dfg_, best_->partitions, estimator);
      if (!before.search.search_estimated_ms || !after.search.search_estimated_ms) {
        return std::nullopt;
      }
      const Plan settled = with_retimings_settled(plan, before, after);
      put_retimed_estimates(profile, settled);
      fits.push_back(overheads_fitting_the_run(as_plan_run(profile), charged));
      run_medians.push_back(profile.run_median_ms);
      parts.push_back(settled.estimated_ms.value_or(0) - charges_ms);
      before = std::move(after);
    }
  } catch (const Error& e) {
    report(fmt::format("the kept plan's charges were not fitted: {}", e.what()));
    return std::nullopt;
  }
  PartitionOverheads fitted = overheads_over_rounds(fits, backends_of(plan));
  report(fmt::format(
      "the kept plan, profiled {} times ({} runs each): ran {:.3f} ms, its parts timed again "
      "{:.3f} ms (medians); charges fitted to its runs: {}",
      fits.size(), runs, percentile(run_medians, 0.5), percentile(parts, 0.5),
      overheads_text(fitted)));
  return fitted;
}

void Tuner::store_learned_state() {
  if (!measuring_.cache) return;
  best_->overheads.store(*measuring_.cache, measuring_.machine, model_);
  learned_.store(*measuring_.cache, measuring_.machine, model_overheads_learned(fitted_model_));
}

Plan Tuner::plan_of(const std::vector<ChosenPartition>& partitions,
                    const CollageResult& result) const {
  Plan plan = build_plan(dfg_, partitions, plan_context(strategy_, options_), result.candidates);
  for (const Backend* backend : backends_) {
    plan.backend_versions[backend->name()] = backend->version();
  }
  // Each backend the search measured computing in its layout computes in
  // it in the plan.
  for (const Backend* backend : backends_) {
    const std::optional<EdgeLayout> layout = backend->search_layout();
    if (!layout || !computes_in(*backend, *layout)) continue;
    for (const PlanPartition& partition : plan.partitions) {
      if (partition.backend == backend->name()) {
        plan.compute_layouts[backend->name()] = edge_layout_name(*layout);
      }
    }
  }
  const EstimatorCounters& c = measuring_.estimator->counters();
  plan.search.candidates = static_cast<int>(result.candidates.size());
  plan.search.measured = c.measured;
  plan.search.cache_hits = c.cache_hits;
  plan.search.invalid = c.invalid;
  plan.search.screened = c.screened;
  plan.search.ruled_out = static_cast<int>(result.left_bounded);
  plan.search.failed_backends.assign(c.failed_backends.begin(), c.failed_backends.end());
  plan.search.states_expanded = static_cast<int>(result.search.stats.states_expanded);
  plan.search.routes_dropped = static_cast<int>(result.search.stats.routes_dropped);
  plan.search.seconds = search_seconds_;
  return plan;
}

Plan Tuner::plan_costed_alone(const std::vector<ChosenPartition>& partitions,
                              const CollageResult& result, const PartitionOverheads& overheads) {
  InContextEstimator in_context(*measuring_.estimator, overheads);
  return plan_of(with_boundary_charges(dfg_, with_costs_alone(dfg_, partitions, in_context),
                                       boundaries_or_null_),
                 result);
}

bool Tuner::over(double share) const {
  return refine_start_ && seconds_since(*refine_start_) > share * options_.search.budget_seconds;
}

void Tuner::report(const std::string& line) const {
  if (options_.progress) {
    options_.progress(TuneProgress{.stage = TuneProgress::Stage::kRefine, .message = line});
  }
}

}  // namespace collage
