#include "collage/backends/xnnpack/layout_plan.h"

#include <fmt/format.h>

#include <numeric>

#include "collage/backends/xnnpack/op_support.h"
#include "collage/backends/xnnpack/op_table.h"

namespace collage::xnnpack {
namespace {

constexpr unsigned kPlainBit = 1;
constexpr unsigned kChannelsLastBit = 2;
constexpr unsigned kAnyLayout = kPlainBit | kChannelsLastBit;

// Union-find over values, each group carrying the set of layouts it may take.
class Groups {
 public:
  explicit Groups(const Graph& graph)
      : graph_(graph),
        parent_(graph.num_values()),
        allowed_(graph.num_values(), kAnyLayout),
        prefers_channels_last_(graph.num_values(), false) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }

  std::size_t find(ValueId value) {
    auto v = static_cast<std::size_t>(value);
    while (parent_[v] != v) {
      parent_[v] = parent_[parent_[v]];
      v = parent_[v];
    }
    return v;
  }

  void unite(ValueId a, ValueId b) {
    if (!is_layout_constrained(graph_, a) || !is_layout_constrained(graph_, b)) return;
    std::size_t root_a = find(a);
    std::size_t root_b = find(b);
    if (root_a == root_b) return;
    parent_[root_b] = root_a;
    allowed_[root_a] &= allowed_[root_b];
  }

  void restrict(ValueId value, unsigned layouts) {
    if (value == kNoValue || graph_.type(value).rank() != 4) return;
    if (!is_layout_constrained(graph_, value)) {
      if (layouts == kChannelsLastBit)
        prefers_channels_last_[static_cast<std::size_t>(value)] = true;
      return;
    }
    allowed_[find(value)] &= layouts;
  }

  unsigned allowed(ValueId value) { return allowed_[find(value)]; }
  bool prefers_channels_last(ValueId value) const {
    return prefers_channels_last_[static_cast<std::size_t>(value)];
  }

 private:
  const Graph& graph_;
  std::vector<std::size_t> parent_;
  std::vector<unsigned> allowed_;
  std::vector<bool> prefers_channels_last_;
};

void apply_rule(const Graph& graph, const Node& node, Groups& groups) {
  const ValueId in = node.input(0);
  const ValueId out = node.outputs[0];
  switch (layout_rule(node)) {
    case LayoutRule::kFollowInput:
      groups.unite(in, out);
      return;
    case LayoutRule::kBroadcast:
      for (ValueId input : node.inputs) {
        const TensorType& type = graph.type(input);
        if (type.rank() == graph.type(out).rank()) {
          groups.unite(input, out);
          continue;
        }
        // A lower-rank activation joins a channels-last output by a reshape,
        // which is a transpose only when its broadcast shape is layout-free.
        Shape aligned = pad_to_rank(type.shape, graph.type(out).rank());
        if (!graph.value(input).is_constant() && !is_layout_free(aligned)) {
          groups.restrict(out, kPlainBit);
        }
      }
      return;
    case LayoutRule::kChannelsLast:
      groups.restrict(in, kChannelsLastBit);
      groups.restrict(out, kChannelsLastBit);
      return;
    case LayoutRule::kPlain:
      groups.restrict(in, kPlainBit);
      groups.restrict(out, kPlainBit);
      return;
    case LayoutRule::kSoftmax: {
      unsigned layouts = 0;
      if (softmax_runs_in(graph, node, Layout::kPlain)) layouts |= kPlainBit;
      if (softmax_runs_in(graph, node, Layout::kChannelsLast)) layouts |= kChannelsLastBit;
      groups.unite(in, out);
      groups.restrict(in, layouts);
      return;
    }
    case LayoutRule::kPrelu:
      if (graph.type(in).rank() != 4) return;
      groups.restrict(in, kChannelsLastBit);
      groups.restrict(out, kChannelsLastBit);
      return;
  }
}

}  // namespace

bool is_layout_constrained(const Graph& graph, ValueId value) {
  if (value == kNoValue || graph.value(value).is_constant()) return false;
  return graph.type(value).rank() == 4 && !is_layout_free(graph.type(value).shape);
}

Result<LayoutPlan> LayoutPlan::make(const Graph& partition,
                                    const std::vector<ValueId>& channels_last_edges) {
  Groups groups(partition);
  for (const Node& node : partition.nodes()) apply_rule(partition, node, groups);
  std::vector<bool> edge_channels_last(partition.num_values(), false);
  for (ValueId edge : channels_last_edges) {
    if (is_layout_constrained(partition, edge)) {
      edge_channels_last[groups.find(edge)] = true;
    }
  }

  LayoutPlan plan;
  plan.layouts_.assign(partition.num_values(), Layout::kPlain);
  for (std::size_t v = 0; v < partition.num_values(); ++v) {
    auto value = static_cast<ValueId>(v);
    if (!is_layout_constrained(partition, value)) {
      if (groups.prefers_channels_last(value)) plan.layouts_[v] = Layout::kChannelsLast;
      continue;
    }
    unsigned allowed = groups.allowed(value);
    if (allowed == 0) {
      return Failure{fmt::format(
          "value '{}' is needed both channels-last and in NCHW order, and XNNPACK has no "
          "transpose",
          partition.value(value).name)};
    }
    const bool free_choice = allowed == kAnyLayout;
    if (allowed == kChannelsLastBit || (free_choice && edge_channels_last[groups.find(value)])) {
      plan.layouts_[v] = Layout::kChannelsLast;
    }
  }
  return plan;
}

}  // namespace collage::xnnpack
