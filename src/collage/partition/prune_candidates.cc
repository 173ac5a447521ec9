#include "collage/partition/prune_candidates.h"

#include <map>
#include <string>

#include "collage/partition/partition_spec.h"

namespace collage {

std::vector<CandidatePartition> prune_candidates(std::vector<CandidatePartition> candidates) {
  if (candidates.empty()) return candidates;
  const std::size_t universe = candidates.front().sub_graph.inside().size();
  // For each spec, the candidates holding each index: a candidate strictly
  // inside another shares its first index with it, so only those are compared.
  std::map<std::string, std::vector<std::vector<std::size_t>>> containing;
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    auto& by_index = containing[candidates[c].spec_name()];
    if (by_index.empty()) by_index.resize(universe);
    for (PostDfsIndex index : candidates[c].sub_graph.inside()) by_index[index].push_back(c);
  }
  std::vector<bool> dropped(candidates.size(), false);
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    const SubGraph& sub_graph = candidates[c].sub_graph;
    if (sub_graph.size() == 1) continue;
    const auto& by_index = containing[candidates[c].spec_name()];
    for (std::size_t other : by_index[sub_graph.first_inside()]) {
      if (other == c) continue;
      if (sub_graph.inside().is_strict_subset(candidates[other].sub_graph.inside())) {
        dropped[c] = true;
        break;
      }
    }
  }
  std::vector<CandidatePartition> kept;
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    if (!dropped[c]) kept.push_back(std::move(candidates[c]));
  }
  return kept;
}

}  // namespace collage
