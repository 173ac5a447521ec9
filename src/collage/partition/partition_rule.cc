#include "collage/partition/partition_rule.h"

#include <cassert>
#include <unordered_set>

namespace collage {
namespace {

// Appends `candidate` unless its inside set was seen already.
void add_distinct(std::vector<CandidatePartition>& out, std::unordered_set<IndexSet>& seen,
                  CandidatePartition candidate) {
  if (!seen.insert(candidate.sub_graph.inside()).second) return;
  out.push_back(std::move(candidate));
}

}  // namespace

std::vector<CandidatePartition> OpPredicateRule::candidates(const DataflowGraph& dfg,
                                                            const PartitionSpecPtr& spec) const {
  std::vector<CandidatePartition> out;
  for (PostDfsIndex index = 0; index < dfg.size(); ++index) {
    if (!dfg.is_operator(index)) continue;
    if (!supported_(dfg.graph(), dfg.node(index))) continue;
    out.push_back({SubGraph(dfg, IndexSet(dfg.size(), {index})), spec, name()});
  }
  return out;
}

std::vector<CandidatePartition> PatternRule::candidates(const DataflowGraph& dfg,
                                                        const PartitionSpecPtr& spec) const {
  std::vector<CandidatePartition> out;
  std::unordered_set<IndexSet> seen;
  for (PostDfsIndex index = 0; index < dfg.size(); ++index) {
    if (!dfg.is_operator(index)) continue;
    auto matched = match(pattern_, dfg.graph(), dfg.node_id(index));
    if (!matched) continue;
    if (predicate_ && !predicate_(dfg.graph(), *matched)) continue;
    IndexSet inside(dfg.size());
    for (NodeId node : *matched) inside.add(dfg.index_of_node(node));
    add_distinct(out, seen, {SubGraph(dfg, std::move(inside), name()), spec, name()});
  }
  return out;
}

std::vector<CandidatePartition> UnionRule::candidates(const DataflowGraph& dfg,
                                                      const PartitionSpecPtr& spec) const {
  std::vector<CandidatePartition> out;
  std::unordered_set<IndexSet> seen;
  for (const PartitionRulePtr& rule : rules_) {
    for (CandidatePartition& candidate : rule->candidates(dfg, spec)) {
      add_distinct(out, seen, std::move(candidate));
    }
  }
  return out;
}

std::vector<CandidatePartition> CombineRule::candidates(const DataflowGraph& dfg,
                                                        const PartitionSpecPtr& spec) const {
  assert(spec && "CombineRule: candidates need a spec (its config bounds the growth)");
  std::vector<CandidatePartition> all;
  // Inside sets already considered, valid or not, so that no merge is tried twice.
  std::unordered_set<IndexSet> seen;
  for (CandidatePartition& candidate : sub_rule_->candidates(dfg, spec)) {
    add_distinct(all, seen, std::move(candidate));
  }
  std::vector<std::vector<std::size_t>> containing(dfg.size());
  auto index_candidates = [&](std::size_t from) {
    for (std::size_t c = from; c < all.size(); ++c) {
      for (PostDfsIndex index : all[c].sub_graph.inside()) containing[index].push_back(c);
    }
  };
  index_candidates(0);

  // Candidates holding each node, those grown this round included.
  std::vector<std::size_t> per_node(dfg.size(), 0);
  for (std::size_t index = 0; index < dfg.size(); ++index)
    per_node[index] = containing[index].size();
  auto full = [&](const IndexSet& inside) {
    for (PostDfsIndex index : inside) {
      if (per_node[index] >= max_per_node_) return true;
    }
    return false;
  };

  std::size_t first_new = 0;
  for (std::size_t round = 0; round < max_rounds_ && first_new < all.size(); ++round) {
    CombineRound view(dfg, all, first_new, containing);
    std::vector<CandidatePartition> grown;
    for (const auto& combiner : combiners_) {
      std::vector<IndexSet> results;
      combiner->combine(view, results);
      for (IndexSet& inside : results) {
        if (!seen.insert(inside).second || full(inside)) continue;
        SubGraph sub_graph(dfg, std::move(inside));
        if (!sub_graph.is_valid(dfg, spec->config)) continue;
        for (PostDfsIndex index : sub_graph.inside()) ++per_node[index];
        grown.push_back({std::move(sub_graph), spec, combiner->name()});
      }
    }
    first_new = all.size();
    for (CandidatePartition& candidate : grown) all.push_back(std::move(candidate));
    index_candidates(first_new);
  }
  return all;
}

std::vector<CandidatePartition> OnlyValidRule::candidates(const DataflowGraph& dfg,
                                                          const PartitionSpecPtr& spec) const {
  std::vector<CandidatePartition> out;
  for (CandidatePartition& candidate : sub_rule_->candidates(dfg, spec)) {
    if (candidate.sub_graph.is_valid(dfg, config_)) out.push_back(std::move(candidate));
  }
  return out;
}

std::vector<CandidatePartition> HostRule::candidates(const DataflowGraph& dfg,
                                                     const PartitionSpecPtr& spec) const {
  std::vector<CandidatePartition> out;
  for (PostDfsIndex index : dfg.host_set()) {
    out.push_back({SubGraph(dfg, IndexSet(dfg.size(), {index}), "host"), spec, name()});
  }
  return out;
}

}  // namespace collage
