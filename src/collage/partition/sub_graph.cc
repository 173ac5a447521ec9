#include "collage/partition/sub_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <unordered_map>

namespace collage {
namespace {

std::string default_label(const DataflowGraph& dfg, const IndexSet& inside) {
  std::string label;
  for (PostDfsIndex index : inside) {
    if (!dfg.is_operator(index)) continue;
    if (!label.empty()) label += "+";
    label += dfg.node(index).op_type;
  }
  return label;
}

std::string limit_text(std::size_t limit) {
  return limit == SubGraphConfig::kNoLimit ? "no limit" : std::to_string(limit);
}

}  // namespace

SubGraph::SubGraph(const DataflowGraph& dfg, IndexSet inside, std::string label)
    : inside_(std::move(inside)),
      entry_(dfg.size()),
      exit_(dfg.size()),
      input_(dfg.size()),
      output_(dfg.size()),
      label_(std::move(label)) {
  assert(inside_.size() == dfg.size() && "SubGraph: inside set is not over this graph");
  std::unordered_map<PostDfsIndex, std::size_t> depth_at;
  for (PostDfsIndex index : inside_) {
    std::size_t depth = 0;
    for (PostDfsIndex producer : dfg.inputs(index)) {
      if (inside_.contains(producer)) {
        depth = std::max(depth, depth_at[producer]);
        continue;
      }
      entry_.add(index);
      input_.add(producer);
    }
    if (dfg.is_operator(index)) {
      ++depth;
      kind_ = std::max(kind_, dfg.kind(index));
    }
    depth_at[index] = depth;
    depth_ = std::max(depth_, depth);

    if (dfg.is_graph_output(index)) exit_.add(index);
    for (PostDfsIndex user : dfg.users(index)) {
      if (inside_.contains(user)) continue;
      exit_.add(index);
      output_.add(user);
    }
  }
  if (label_.empty()) label_ = default_label(dfg, inside_);
}

std::size_t SubGraph::operator_count(const DataflowGraph& dfg) const {
  return (inside_ - dfg.host_set()).popcount();
}

bool SubGraph::is_convex(const DataflowGraph& dfg) const {
  // A path that leaves and re-enters must pass through an output node and
  // end at an entry node.
  for (PostDfsIndex index : output_) {
    if (dfg.downstream_of(index).intersects(entry_)) return false;
  }
  return true;
}

bool SubGraph::has_taps(const DataflowGraph& dfg) const {
  for (PostDfsIndex index : exit_) {
    for (PostDfsIndex user : dfg.users(index)) {
      if (inside_.contains(user)) return true;
    }
  }
  return false;
}

bool SubGraph::is_valid(const DataflowGraph& dfg, const SubGraphConfig& config) const {
  return !invalid_reason(dfg, config).has_value();
}

std::optional<std::string> SubGraph::invalid_reason(const DataflowGraph& dfg,
                                                    const SubGraphConfig& config) const {
  if (inside_.empty()) return "it is empty";
  std::size_t exits = exit_.popcount();
  if (exits > config.max_exits) {
    return fmt::format("it has {} exits (at most {})", exits, limit_text(config.max_exits));
  }
  if (depth_ > config.max_depth) {
    return fmt::format("its depth is {} (at most {})", depth_, limit_text(config.max_depth));
  }
  if (!config.allow_taps && has_taps(dfg)) return "an exit node also feeds a node inside";
  if (!is_convex(dfg)) return "a path leaves it and comes back (not convex)";
  // A region runs node by node whatever else it is with; on its own, the
  // values it reads are checked like a model's outputs (run_checked in
  // session/evaluation.h).
  if (inside_.intersects(dfg.runtime_regions()) && inside_.popcount() > 1) {
    return "it holds a runtime-shaped region and more";
  }
  return std::nullopt;
}

SubGraph SubGraph::disjoint_union(const DataflowGraph& dfg, const SubGraph& other) const {
  assert(!inside_.intersects(other.inside_) && "SubGraph::disjoint_union: sets overlap");
  std::string label = label_.empty()         ? other.label_
                      : other.label_.empty() ? label_
                                             : label_ + "+" + other.label_;
  return SubGraph(dfg, inside_ | other.inside_, std::move(label));
}

Graph SubGraph::extract(const DataflowGraph& dfg) const {
  return extract_subgraph(dfg.graph(), node_ids(dfg));
}

std::string SubGraph::to_string() const { return label_ + inside_.to_string(); }

}  // namespace collage
