#include "collage/partition/combiner_rule.h"

#include <fmt/format.h>

#include <unordered_set>

namespace collage {

std::optional<std::size_t> CombineRound::singleton(PostDfsIndex index) const {
  for (std::size_t candidate : containing_[index]) {
    if (candidates_[candidate].sub_graph.size() == 1) return candidate;
  }
  return std::nullopt;
}

void PairwiseCombiner::combine(const CombineRound& round, std::vector<IndexSet>& results) const {
  const DataflowGraph& dfg = round.dfg();
  auto try_pair = [&](std::size_t upstream, std::size_t downstream) {
    const SubGraph& up = round.sub_graph(upstream);
    const SubGraph& down = round.sub_graph(downstream);
    if (up.inside().intersects(down.inside())) return;
    if (!fires(dfg, up, down)) return;
    results.push_back(up.inside() | down.inside());
  };
  std::unordered_set<std::size_t> tried;
  for (std::size_t fresh = round.first_new(); fresh < round.candidates().size(); ++fresh) {
    const SubGraph& sub_graph = round.sub_graph(fresh);
    // As upstream: every candidate (old or new) holding a node it feeds.
    tried.clear();
    for (PostDfsIndex index : sub_graph.output()) {
      for (std::size_t downstream : round.containing(index)) {
        if (tried.insert(downstream).second) try_pair(fresh, downstream);
      }
    }
    // As downstream: every old candidate holding a node that feeds it. New
    // upstream candidates met this one in their own upstream pass above.
    tried.clear();
    for (PostDfsIndex index : sub_graph.input()) {
      for (std::size_t upstream : round.containing(index)) {
        if (round.is_new(upstream)) continue;
        if (tried.insert(upstream).second) try_pair(upstream, fresh);
      }
    }
  }
}

std::string ByKindCombiner::name() const {
  return fmt::format("by_kind({},{})", op_kind_name(upstream_), op_kind_name(downstream_));
}

bool ByKindCombiner::fires(const DataflowGraph& dfg, const SubGraph& upstream,
                           const SubGraph& downstream) const {
  return upstream.kind() <= upstream_ && downstream.kind() <= downstream_;
}

std::string FanInCombiner::name() const {
  return fmt::format("fan_in({},{})", op_type_, op_kind_name(max_producer_kind_));
}

void FanInCombiner::combine(const CombineRound& round, std::vector<IndexSet>& results) const {
  const DataflowGraph& dfg = round.dfg();
  for (std::size_t fresh = round.first_new(); fresh < round.candidates().size(); ++fresh) {
    const SubGraph& sub_graph = round.sub_graph(fresh);
    for (PostDfsIndex entry : sub_graph.entry()) {
      if (!dfg.is_operator(entry) || dfg.node(entry).op_type != op_type_) continue;
      IndexSet merged = sub_graph.inside();
      bool grew = false;
      for (PostDfsIndex producer : dfg.inputs(entry)) {
        if (merged.contains(producer) || !dfg.is_operator(producer)) continue;
        if (dfg.kind(producer) > max_producer_kind_) continue;
        // Only producers the backend runs on their own may join.
        if (!round.singleton(producer)) continue;
        merged.add(producer);
        grew = true;
      }
      if (grew) results.push_back(std::move(merged));
    }
  }
}

std::string FanOutCombiner::name() const {
  return fmt::format("fan_out({},{})", op_type_, op_kind_name(max_consumer_kind_));
}

void FanOutCombiner::combine(const CombineRound& round, std::vector<IndexSet>& results) const {
  const DataflowGraph& dfg = round.dfg();
  for (std::size_t fresh = round.first_new(); fresh < round.candidates().size(); ++fresh) {
    const SubGraph& sub_graph = round.sub_graph(fresh);
    for (PostDfsIndex exit : sub_graph.exit()) {
      if (!dfg.is_operator(exit) || dfg.node(exit).op_type != op_type_) continue;
      IndexSet merged = sub_graph.inside();
      bool grew = false;
      for (PostDfsIndex consumer : dfg.users(exit)) {
        if (merged.contains(consumer)) continue;
        if (dfg.kind(consumer) > max_consumer_kind_) continue;
        if (!round.singleton(consumer)) continue;
        merged.add(consumer);
        grew = true;
      }
      if (grew) results.push_back(std::move(merged));
    }
  }
}

void ConstantCombiner::combine(const CombineRound& round, std::vector<IndexSet>& results) const {
  const DataflowGraph& dfg = round.dfg();
  for (std::size_t fresh = round.first_new(); fresh < round.candidates().size(); ++fresh) {
    const SubGraph& sub_graph = round.sub_graph(fresh);
    IndexSet merged = sub_graph.inside();
    bool grew = false;
    for (PostDfsIndex input : sub_graph.input()) {
      if (dfg.role(input) != DataflowGraph::Role::kConstant) continue;
      merged.add(input);
      grew = true;
    }
    if (grew) results.push_back(std::move(merged));
  }
}

}  // namespace collage
