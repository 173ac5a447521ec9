#include "collage/search/collage_partitioner.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "collage/partition/prune_candidates.h"
#include "collage/search/coalesce.h"
#include "collage/search/strategy.h"

namespace collage {
namespace {

// Answers the search from the costs estimated up front, so nothing is
// estimated twice.
class PrecomputedEstimator : public CostEstimator {
 public:
  PrecomputedEstimator(const std::vector<EstimatedCandidate>& known, CostEstimator& fallback)
      : fallback_(fallback) {
    for (const EstimatedCandidate& e : known) {
      costs_.emplace(key(e.candidate), e.cost);
    }
  }

  Cost estimate(const DataflowGraph& dfg, const CandidatePartition& candidate) override {
    if (auto it = costs_.find(key(candidate)); it != costs_.end()) return it->second;
    return fallback_.estimate(dfg, candidate);
  }

 private:
  static std::pair<std::string, IndexSet> key(const CandidatePartition& c) {
    return {c.spec_name(), c.sub_graph.inside()};
  }
  std::map<std::pair<std::string, IndexSet>, Cost> costs_;
  CostEstimator& fallback_;
};

}  // namespace

CollageResult collage_partition(const DataflowGraph& dfg,
                                const std::vector<PartitionSpecPtr>& specs,
                                CostEstimator& estimator, const CollageOptions& options) {
  auto start = std::chrono::steady_clock::now();
  std::vector<CandidatePartition> candidates = gather_candidates(dfg, specs);
  if (options.prune) candidates = prune_candidates(std::move(candidates));

  CollageResult result;
  result.candidates.reserve(candidates.size());
  estimator.prepare(dfg, candidates);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    Cost cost = estimator.estimate(dfg, candidates[i]);
    if (options.progress) options.progress(i + 1, candidates.size(), candidates[i], cost);
    result.candidates.push_back(EstimatedCandidate{candidates[i], cost});
  }

  PrecomputedEstimator known(result.candidates, estimator);
  result.search = find_cheapest_cover(dfg, candidates, known, options.boundaries);
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
