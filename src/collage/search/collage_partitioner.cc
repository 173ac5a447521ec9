#include "collage/search/collage_partitioner.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "collage/partition/prune_candidates.h"
#include "collage/search/coalesce.h"
#include "collage/search/strategy.h"

namespace collage {
namespace {

using CandidateKey = std::pair<std::string, IndexSet>;

CandidateKey key_of(const CandidatePartition& c) { return {c.spec_name(), c.sub_graph.inside()}; }

// What the search counts for a candidate: a screen a little below itself.
Cost searched_cost(const EstimatedCandidate& e) {
  if (e.fidelity != Fidelity::kScreened || !e.cost.is_valid()) return e.cost;
  return Cost::value(e.cost.seconds() * (1 - kScreenNoise));
}

// Answers the search from the costs estimated up front, so nothing is
// estimated twice.
class PrecomputedEstimator : public CostEstimator {
 public:
  PrecomputedEstimator(const std::vector<EstimatedCandidate>& known, CostEstimator& fallback)
      : fallback_(fallback) {
    for (const EstimatedCandidate& e : known) costs_.emplace(key_of(e.candidate), searched_cost(e));
  }

  Cost estimate(const DataflowGraph& dfg, const CandidatePartition& candidate) override {
    if (auto it = costs_.find(key_of(candidate)); it != costs_.end()) return it->second;
    return fallback_.estimate(dfg, candidate);
  }

 private:
  std::map<CandidateKey, Cost> costs_;
  CostEstimator& fallback_;
};

// Fills `result.candidates` and `result.search` by screening
// (CollageOptions::screen).
void search_by_screening(const DataflowGraph& dfg, std::vector<CandidatePartition> candidates,
                         CostEstimator& estimator, const CollageOptions& options,
                         CollageResult& result) {
  std::map<CandidateKey, std::size_t> index;
  for (std::size_t i = 0; i < candidates.size(); ++i) index.emplace(key_of(candidates[i]), i);
  std::vector<EstimatedCandidate>& known = result.candidates;
  for (const CandidatePartition& c : candidates) {
    BoundedCost bounded = estimator.bound(dfg, c, Fidelity::kBound);
    known.push_back({c, bounded.cost, bounded.fidelity});
  }
  // Candidates past their bound: screened, timed, or found in the cache.
  std::size_t run = 0;
  for (const EstimatedCandidate& e : known) run += e.fidelity != Fidelity::kBound ? 1 : 0;
  auto report = [&](const EstimatedCandidate& e) {
    if (options.progress) options.progress(run, candidates.size(), e.candidate, e.cost);
  };
  for (;;) {
    ++result.screening_rounds;
    // Bounds grow with what the estimator learns: read them again.
    for (EstimatedCandidate& e : known) {
      if (e.fidelity != Fidelity::kBound) continue;
      BoundedCost bounded = estimator.bound(dfg, e.candidate, Fidelity::kBound);
      if (bounded.fidelity != Fidelity::kBound) ++run;
      e.cost = bounded.cost;
      e.fidelity = bounded.fidelity;
    }
    PrecomputedEstimator costs(known, estimator);
    result.search = find_cheapest_cover(dfg, candidates, costs, options.boundaries);
    // A first look that compiles a kernel waits while cheaper ones are
    // left: what they teach may rule it out.
    std::vector<std::size_t> to_raise;
    std::vector<std::size_t> dear;
    for (const ChosenPartition& p : result.search.partitions) {
      auto it = index.find(key_of(p.candidate));
      if (it == index.end() || known[it->second].fidelity == Fidelity::kExact) continue;
      const bool waits =
          known[it->second].fidelity == Fidelity::kBound && estimator.dear_to_screen(p.candidate);
      (waits ? dear : to_raise).push_back(it->second);
    }
    if (to_raise.empty()) to_raise = std::move(dear);
    if (to_raise.empty()) break;
    std::vector<CandidatePartition> batch;
    for (std::size_t i : to_raise) batch.push_back(candidates[i]);
    estimator.prepare(dfg, batch);
    for (std::size_t i : to_raise) {
      EstimatedCandidate& e = known[i];
      const bool first_run = e.fidelity == Fidelity::kBound;
      BoundedCost bounded =
          estimator.bound(dfg, e.candidate, first_run ? Fidelity::kScreened : Fidelity::kExact);
      e.cost = bounded.cost;
      e.fidelity = bounded.fidelity;
      if (first_run) ++run;
      report(e);
    }
  }
  for (const EstimatedCandidate& e : known) {
    if (e.fidelity == Fidelity::kScreened) ++result.left_screened;
    if (e.fidelity == Fidelity::kBound) ++result.left_bounded;
  }
}

}  // namespace

CollageResult collage_partition(const DataflowGraph& dfg,
                                const std::vector<PartitionSpecPtr>& specs,
                                CostEstimator& estimator, const CollageOptions& options) {
  auto start = std::chrono::steady_clock::now();
  std::vector<CandidatePartition> candidates = gather_candidates(dfg, specs);
  if (options.prune) candidates = prune_candidates(std::move(candidates));

  CollageResult result;
  result.candidates.reserve(candidates.size());
  if (options.screen) {
    search_by_screening(dfg, std::move(candidates), estimator, options, result);
  } else {
    estimator.prepare(dfg, candidates);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      Cost cost = estimator.estimate(dfg, candidates[i]);
      if (options.progress) options.progress(i + 1, candidates.size(), candidates[i], cost);
      result.candidates.push_back(EstimatedCandidate{candidates[i], cost});
    }
    PrecomputedEstimator known(result.candidates, estimator);
    result.search = find_cheapest_cover(dfg, candidates, known, options.boundaries);
  }
  if (options.coalesce) {
    result.search.partitions = coalesce(dfg, std::move(result.search.partitions), estimator);
  }
  if (options.boundaries) charge_boundaries(dfg, result.search.partitions, *options.boundaries);
  result.search.total = total_cost(result.search.partitions);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::vector<EstimatedCandidate> alternatives_for(const DataflowGraph& dfg,
                                                 const CandidatePartition& chosen,
                                                 const std::vector<EstimatedCandidate>& all,
                                                 std::size_t limit) {
  IndexSet chosen_ops = operator_set(dfg, chosen.sub_graph);
  auto first = chosen_ops.first_inside();
  std::vector<EstimatedCandidate> result;
  if (!first) return result;
  for (const EstimatedCandidate& e : all) {
    IndexSet ops = operator_set(dfg, e.candidate.sub_graph);
    if (ops.first_inside() != first) continue;
    if (ops == chosen_ops && e.candidate.spec_name() == chosen.spec_name()) continue;
    result.push_back(e);
  }
  std::stable_sort(
      result.begin(), result.end(),
      [](const EstimatedCandidate& a, const EstimatedCandidate& b) { return a.cost < b.cost; });
  if (result.size() > limit)
    result.erase(result.begin() + static_cast<std::ptrdiff_t>(limit), result.end());
  return result;
}

}  // namespace collage
