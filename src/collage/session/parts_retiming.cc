#include "collage/session/parts_retiming.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "collage/backends/search_layout.h"
#include "collage/ir/error.h"
#include "collage/session/measuring.h"

namespace collage {

std::optional<double> retimed_change_ms(MeasuringEstimator& estimator, const DataflowGraph& dfg,
                                        const CandidatePartition& candidate) {
  if (candidate.spec->backend == nullptr) return std::nullopt;
  const Cost searched = estimator.estimate(dfg, candidate);
  const Cost now = estimator.retime(dfg, candidate, MeasuringEstimator::Keep::kNeither);
  if (!searched.is_valid() || !now.is_valid()) return std::nullopt;
  return (now.seconds() - searched.seconds()) * 1e3;
}

Plan with_parts_retimed(const Plan& plan, const DataflowGraph& dfg,
                        const std::vector<ChosenPartition>& cover, MeasuringEstimator& estimator) {
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
    if (std::optional<double> change = retimed_change_ms(estimator, dfg, candidate)) {
      *partition.estimated_ms += *change;
    }
    total += *partition.estimated_ms;
  }
  timed.estimated_ms = total;
  timed.search.search_estimated_ms = plan.estimated_ms;
  return timed;
}

void put_retimed_estimates(PlanProfile& profile, const Plan& retimed) {
  for (PartitionProfile& row : profile.partitions) {
    row.estimated_ms = retimed.partitions[static_cast<std::size_t>(row.index)].estimated_ms;
  }
  profile.estimated_ms = retimed.estimated_ms;
}

std::optional<Plan> retime_into_profile(PlanProfile& profile, const Plan& plan,
                                        const DataflowGraph& dfg,
                                        const std::vector<ChosenPartition>& cover,
                                        MeasuringEstimator& estimator) {
  Plan timed = with_parts_retimed(plan, dfg, cover, estimator);
  if (!timed.search.search_estimated_ms) return std::nullopt;
  put_retimed_estimates(profile, timed);
  return timed;
}

double settled_retiming(double estimate_ms, const std::vector<double>& changes) {
  const auto [low, high] = std::minmax_element(changes.begin(), changes.end());
  if (estimate_ms + *high > 1.5 * (estimate_ms + *low)) return *low;
  double sum = 0;
  for (double change : changes) sum += change;
  return sum / static_cast<double>(changes.size());
}

Plan with_retimings_settled(const Plan& plan, const Plan& before, const Plan& after) {
  Plan settled = plan;
  double total = 0;
  for (std::size_t i = 0; i < settled.partitions.size(); ++i) {
    std::optional<double>& estimate = settled.partitions[i].estimated_ms;
    const std::optional<double>& first = before.partitions[i].estimated_ms;
    const std::optional<double>& second = after.partitions[i].estimated_ms;
    if (estimate && first && second) {
      *estimate += settled_retiming(*estimate, {*first - *estimate, *second - *estimate});
    }
    total += estimate.value_or(0);
  }
  settled.estimated_ms = total;
  return settled;
}

int retime_contradicted(const DataflowGraph& dfg, const std::vector<ChosenPartition>& chosen,
                        const PlanProfile& profile, MeasuringEstimator& estimator) {
  int retimed = 0;
  for (const PartitionProfile& row : profile.partitions) {
    const auto index = static_cast<std::size_t>(row.index);
    if (index >= chosen.size()) continue;
    const CandidatePartition& candidate = chosen[index].candidate;
    if (candidate.spec->backend == nullptr) continue;
    const Cost alone = estimator.estimate(dfg, candidate);
    if (!alone.is_valid()) continue;
    const double alone_ms = alone.seconds() * 1e3;
    if (alone_ms <= kContradictionRatio * row.in_context_ms + kMinContradictionMs) continue;
    estimator.retime(dfg, candidate, MeasuringEstimator::Keep::kFaster);
    ++retimed;
  }
  return retimed;
}

void retime_parts_kept(const DataflowGraph& dfg, const std::vector<ChosenPartition>& cover,
                       MeasuringEstimator& estimator, const ProgressCallback& progress) {
  // Per part: its measurement before, and the one kept (none: not a
  // backend's, or either measurement not valid).
  std::vector<std::optional<std::pair<double, double>>> times(cover.size());
  try {
    // The first pass replaces the tuned measurement; the later ones keep
    // the faster of theirs and the one kept so far.
    for (std::size_t i = 0; i < cover.size(); ++i) {
      const CandidatePartition& candidate = cover[i].candidate;
      if (candidate.spec->backend == nullptr) continue;
      const Cost before = estimator.estimate(dfg, candidate);
      const Cost after = estimator.retime(dfg, candidate, MeasuringEstimator::Keep::kNewer);
      if (!before.is_valid() || !after.is_valid()) continue;
      times[i] = std::pair{before.seconds() * 1e3, after.seconds() * 1e3};
    }
    for (int pass = 1; pass < kPartTimings; ++pass) {
      for (std::size_t i = 0; i < cover.size(); ++i) {
        if (!times[i]) continue;
        const Cost kept =
            estimator.retime(dfg, cover[i].candidate, MeasuringEstimator::Keep::kFaster);
        times[i]->second = kept.seconds() * 1e3;
      }
    }
  } catch (const Error& e) {
    if (progress) {
      progress(TuneProgress{
          .stage = TuneProgress::Stage::kRefine,
          .message = fmt::format("timing the plan's parts again stopped: {}", e.what())});
    }
  }
  double before_ms = 0;
  double after_ms = 0;
  int retimed = 0;
  for (const std::optional<std::pair<double, double>>& part : times) {
    if (!part) continue;
    before_ms += part->first;
    after_ms += part->second;
    ++retimed;
  }
  if (progress && retimed > 0) {
    progress(TuneProgress{
        .stage = TuneProgress::Stage::kRefine,
        .message = fmt::format("tuned before: the plan's {} partitions timed again ({} times "
                               "each, the faster kept), {:.3f} ms in all ({:.3f} ms when "
                               "measured before)",
                               retimed, kPartTimings, after_ms, before_ms)});
  }
}

std::vector<std::optional<CandidatePartition>> plan_candidates(
    const DataflowGraph& dfg, const std::vector<PartitionSpecPtr>& specs, const Plan& plan) {
  const Graph& graph = dfg.graph();
  std::vector<std::optional<CandidatePartition>> candidates;
  for (const PlanPartition& partition : plan.partitions) {
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const PartitionSpecPtr& s) {
      return s->name == partition.backend;
    });
    IndexSet inside = dfg.empty_set();
    bool found = spec != specs.end() && !partition.nodes.empty();
    for (const std::string& name : partition.nodes) {
      std::optional<NodeId> node = graph.find_node(name);
      if (!node) {
        found = false;
        break;
      }
      inside.add(dfg.index_of_node(*node));
    }
    if (found) {
      candidates.emplace_back(CandidatePartition{SubGraph(dfg, inside), *spec, partition.rule});
    } else {
      candidates.emplace_back();
    }
  }
  return candidates;
}

struct PartsRetimer::State {
  explicit State(const Graph& graph) : dfg(graph) {}
  DataflowGraph dfg;
  // The backends wrapped to measure in the plan's compute layout.
  std::vector<std::unique_ptr<Backend>> in_layout;
  Measuring measuring;
  // Per partition of the plan: its candidate, when its nodes are found.
  std::vector<std::optional<CandidatePartition>> candidates;
};

PartsRetimer::PartsRetimer(const Graph& graph, const Plan& plan, const PlanningOptions& options)
    : state_(std::make_unique<State>(graph)) {
  state_->measuring = open_measuring(options);
  // Measured as the search measured them: in the layout the plan computes
  // in (backends/search_layout.h).
  std::vector<PartitionSpecPtr> specs =
      make_backend_specs(in_search_layout(resolve_backends(options.backends),
                                          plan_compute_layout(plan), state_->in_layout),
                         spec_options(options.search));
  state_->candidates = plan_candidates(state_->dfg, specs, plan);
  std::vector<CandidatePartition> known;
  for (const std::optional<CandidatePartition>& candidate : state_->candidates) {
    if (candidate) known.push_back(*candidate);
  }
  state_->measuring.estimator->prepare(state_->dfg, known);
}

PartsRetimer::~PartsRetimer() = default;

std::size_t PartsRetimer::size() const { return state_->candidates.size(); }

std::optional<double> PartsRetimer::retime(std::size_t index) {
  const std::optional<CandidatePartition>& candidate = state_->candidates.at(index);
  if (!candidate) return std::nullopt;
  return retimed_change_ms(*state_->measuring.estimator, state_->dfg, *candidate);
}

}  // namespace collage
