#include "collage/partition/partition_spec.h"

#include <cassert>
#include <unordered_set>

#include "collage/partition/partition_rule.h"

namespace collage {

PartitionSpecPtr make_partition_spec(std::string name, std::shared_ptr<const PartitionRule> rule,
                                     SubGraphConfig config, const Backend* backend,
                                     std::optional<SubGraphConfig> merge_config) {
  return std::make_shared<const PartitionSpec>(PartitionSpec{
      std::move(name), std::move(rule), config, merge_config.value_or(config), backend});
}

std::vector<CandidatePartition> gather_candidates(const DataflowGraph& dfg,
                                                  const PartitionSpecPtr& spec) {
  assert(spec && spec->rule && "gather_candidates: a spec needs a rule");
  std::vector<CandidatePartition> out;
  std::unordered_set<IndexSet> seen;
  for (CandidatePartition& candidate : spec->rule->candidates(dfg, spec)) {
    if (!candidate.sub_graph.is_valid(dfg, spec->config)) continue;
    if (!seen.insert(candidate.sub_graph.inside()).second) continue;
    out.push_back(std::move(candidate));
  }
  return out;
}

std::vector<CandidatePartition> gather_candidates(const DataflowGraph& dfg,
                                                  const std::vector<PartitionSpecPtr>& specs) {
  std::vector<CandidatePartition> out;
  for (const PartitionSpecPtr& spec : specs) {
    for (CandidatePartition& candidate : gather_candidates(dfg, spec)) {
      out.push_back(std::move(candidate));
    }
  }
  return out;
}

}  // namespace collage
