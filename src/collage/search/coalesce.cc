#include "collage/search/coalesce.h"

#include <cassert>
#include <optional>
#include <unordered_set>
#include <utility>
#include <vector>

#include "collage/ir/error.h"
#include "collage/partition/partition_order.h"
#include "collage/partition/partition_spec.h"

namespace collage {
namespace {

std::vector<IndexSet> insides_of(const std::vector<ChosenPartition>& partitions) {
  std::vector<IndexSet> insides;
  insides.reserve(partitions.size());
  for (const ChosenPartition& partition : partitions) {
    insides.push_back(partition.candidate.sub_graph.inside());
  }
  return insides;
}

// The merge of partitions `a` and `b` as a candidate, or nullopt when it is
// not allowed (refused before, not a valid sub-graph, or a cycle). A union
// that is not a valid sub-graph joins `refused`.
std::optional<CandidatePartition> merge_candidate(const DataflowGraph& dfg,
                                                  const std::vector<ChosenPartition>& partitions,
                                                  std::size_t a, std::size_t b,
                                                  std::unordered_set<IndexSet>& refused) {
  const CandidatePartition& first = partitions[a].candidate;
  const CandidatePartition& second = partitions[b].candidate;
  if (first.spec_name() != second.spec_name()) return std::nullopt;
  if (!first.sub_graph.touches(second.sub_graph)) return std::nullopt;
  IndexSet inside = first.sub_graph.inside() | second.sub_graph.inside();
  if (refused.count(inside)) return std::nullopt;

  SubGraph merged = first.sub_graph.disjoint_union(dfg, second.sub_graph);
  if (!merged.is_valid(dfg, first.spec->merge_config)) {
    refused.insert(inside);
    return std::nullopt;
  }
  std::vector<IndexSet> after;
  for (std::size_t p = 0; p < partitions.size(); ++p) {
    if (p != a && p != b) after.push_back(partitions[p].candidate.sub_graph.inside());
  }
  after.push_back(inside);
  if (partitions_form_cycle(dfg, after)) return std::nullopt;
  return CandidatePartition{std::move(merged), first.spec, "coalesce"};
}

}  // namespace

std::vector<ChosenPartition> coalesce(const DataflowGraph& dfg,
                                      std::vector<ChosenPartition> partitions,
                                      CostEstimator& estimator) {
  if (partitions_form_cycle(dfg, insides_of(partitions))) {
    throw Error("coalesce: the partitions already feed each other in a cycle");
  }
  // Merged sets already estimated and refused, so that no union is
  // estimated twice.
  std::unordered_set<IndexSet> refused;
  for (bool merged_any = true; merged_any;) {
    merged_any = false;
    // Every merge this pass may make (partitions `a` and `b` of
    // `pairs[i]` as `merges[i]`), in the order it tries them; all at once
    // to an estimator that measures in batches.
    std::vector<CandidatePartition> merges;
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    for (std::size_t a = 0; a < partitions.size(); ++a) {
      for (std::size_t b = a + 1; b < partitions.size(); ++b) {
        if (auto merge = merge_candidate(dfg, partitions, a, b, refused)) {
          merges.push_back(std::move(*merge));
          pairs.emplace_back(a, b);
        }
      }
    }
    if (!merges.empty()) estimator.prefetch(dfg, merges);
    // The first merge that costs no more than its two parts.
    for (std::size_t i = 0; i < merges.size() && !merged_any; ++i) {
      const auto [a, b] = pairs[i];
      Cost cost = estimator.estimate(dfg, merges[i]);
      if (!cost.is_valid() || cost > partitions[a].cost + partitions[b].cost) {
        refused.insert(merges[i].sub_graph.inside());
        continue;
      }
      partitions[a] = ChosenPartition{std::move(merges[i]), std::move(cost)};
      partitions.erase(partitions.begin() + static_cast<std::ptrdiff_t>(b));
      merged_any = true;
    }
  }
  // Every merge was checked for cycles, so an order exists.
  auto ordered = in_execution_order(dfg, std::move(partitions));
  assert(ordered && "coalesce: a merge formed a cycle between partitions");
  return std::move(*ordered);
}

}  // namespace collage
