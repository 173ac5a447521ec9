#include "collage/cost/boundary_costs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "collage/cost/cache_keys.h"
#include "collage/cost/measurer.h"
#include "collage/runtime/layout_convert.h"
#include "collage/runtime/timing.h"

namespace collage {
namespace {

// The first of `producer`'s laid-out layouts that fits `type` and that
// `takes` accepts, as negotiate_edge_layouts offers them to a reader that
// follows layouts; plain when there is none.
template <typename Takes>
EdgeLayout first_layout_taken(const Backend& producer, const TensorType& type, Takes takes) {
  for (EdgeLayout layout : producer.edge_layouts()) {
    if (layout != EdgeLayout::kPlain && edge_layout_fits(layout, type) && takes(layout)) {
      return layout;
    }
  }
  return EdgeLayout::kPlain;
}

// Who converts, as the cache key names it.
std::string converter_name(const Backend* backend) {
  if (backend == nullptr) return "tiled";
  return fmt::format("{} {} {}", backend->name(), backend->version(), backend->code_version());
}

}  // namespace

double ConversionCosts::seconds(const TensorType& type, const LayoutChange& change) {
  if (change.layout == EdgeLayout::kPlain || edge_layout_free(type) ||
      !edge_layout_fits(change.layout, type)) {
    return 0.0;
  }
  const std::string what = fmt::format("{}|{}|{}|{}", edge_layout_name(change.layout),
                                       change.to_plain ? "to plain" : "from plain",
                                       type.to_string(), converter_name(change.backend));
  if (auto it = known_.find(what); it != known_.end()) return it->second;
  const std::string key = conversion_key(what, threads_, machine_);
  double result = 0.0;
  std::optional<CachedMeasurement> cached = cache_ ? cache_->find(key) : std::nullopt;
  if (cached && cached->valid) {
    result = cached->seconds;
  } else {
    result = measure(type, change);
    if (cache_) cache_->store(key, CachedMeasurement::of_value(result));
  }
  known_.emplace(what, result);
  return result;
}

double ConversionCosts::measure(const TensorType& type, const LayoutChange& change) {
  // A transpose moves bytes whatever they stand for: any nonzero pattern does.
  std::vector<std::byte> src(type.byte_size(), std::byte{1});
  std::vector<std::byte> dst(type.byte_size());
  std::unique_ptr<LayoutConversion> own =
      change.backend
          ? change.backend->layout_conversion(type, change.layout, change.to_plain, threads_)
          : nullptr;
  // The source is written first, as a producer would have just done.
  TimingResult timing = time_function(
      [&] {
        src[src.size() / 2] ^= std::byte{2};
        if (own) {
          own->run(src.data(), dst.data());
        } else {
          convert_edge_layout(type, src.data(),
                              change.to_plain ? change.layout : EdgeLayout::kPlain, dst.data(),
                              change.to_plain ? EdgeLayout::kPlain : change.layout, threads_);
        }
      },
      MeasureOptions::default_candidate_timing());
  return timing.trimmed_mean_seconds;
}

const Backend* LayoutBoundaryCosts::find(const std::string& name) const {
  for (const Backend* backend : backends_) {
    if (backend->name() == name) return backend;
  }
  return nullptr;
}

bool LayoutBoundaryCosts::follows(const Backend* backend, const DataflowGraph& dfg,
                                  const IndexSet* nodes) {
  return backend != nullptr && nodes != nullptr &&
         follows_layouts(*backend, dfg.graph(), dfg.node_ids(*nodes));
}

std::optional<EdgeLayout> LayoutBoundaryCosts::followed_layout(const DataflowGraph& dfg,
                                                               const Backend& backend,
                                                               const IndexSet& nodes,
                                                               const PlacedOperators& placement,
                                                               SettledFollowers& known) const {
  if (auto settled = known.find(&nodes); settled != known.end()) return settled->second;
  // Unknown while it is being settled: partitions form no cycle, so only a
  // malformed placement would come back to it.
  known.emplace(&nodes, std::nullopt);
  const Graph& graph = dfg.graph();
  const std::vector<NodeId> ids = dfg.node_ids(nodes);
  auto runs_in = [&](EdgeLayout layout) {
    return nodes_run_in_layout(backend, graph, ids, layout);
  };
  bool placed = false;
  std::optional<EdgeLayout> result;
  for (PostDfsIndex i : nodes) {
    if (result || !dfg.is_operator(i)) continue;
    for (PostDfsIndex j : dfg.inputs(i)) {
      if (result || nodes.contains(j)) continue;
      if (dfg.is_host(j)) {
        // A graph input comes plain; a constant tells nothing.
        placed |= dfg.role(j) == DataflowGraph::Role::kInput;
        continue;
      }
      const std::optional<PlacedPartition> feeding = placement(j);
      const Backend* feeder = feeding ? find(feeding->backend) : nullptr;
      if (feeder == nullptr || feeding->nodes == nullptr) continue;
      std::optional<EdgeLayout> fed;
      if (follows(feeder, dfg, feeding->nodes)) {
        fed = followed_layout(dfg, *feeder, *feeding->nodes, placement, known);
        if (!fed) continue;
      }
      placed = true;
      for (ValueId value : dfg.node(j).outputs) {
        if (result || value == kNoValue) continue;
        const std::vector<ValueId>& read = dfg.node(i).inputs;
        if (std::find(read.begin(), read.end(), value) == read.end()) continue;
        const TensorType& type = graph.type(value);
        // A graph output is handed over plain. A follower hands over in the
        // layout it computes in; another feeder in the first of its layouts
        // that fits and that this follower runs in (negotiate_edge_layouts).
        if (graph.is_output(value) || edge_layout_free(type)) continue;
        if (fed) {
          if (*fed != EdgeLayout::kPlain && edge_layout_fits(*fed, type) && runs_in(*fed)) {
            result = *fed;
          }
          continue;
        }
        const EdgeLayout handed = first_layout_taken(*feeder, type, runs_in);
        if (handed != EdgeLayout::kPlain) result = handed;
      }
    }
  }
  if (!result && placed) result = EdgeLayout::kPlain;
  known[&nodes] = result;
  return result;
}

std::uint32_t LayoutBoundaryCosts::edge_class(const DataflowGraph& dfg, const std::string& backend,
                                              const IndexSet& nodes,
                                              const PlacedOperators& placement) {
  const Backend* found = find(backend);
  if (!follows(found, dfg, &nodes)) return 0;
  const std::optional<EdgeLayout> layout = followed_layout(dfg, *found, nodes, placement);
  return layout ? 2 + static_cast<std::uint32_t>(*layout) : 1;
}

BoundaryCharge LayoutBoundaryCosts::charge(const DataflowGraph& dfg, PostDfsIndex producer,
                                           const std::string& from, const IndexSet* from_nodes,
                                           const IndexSet* to_nodes, const std::string& to,
                                           const PlacedOperators* placement) {
  const Graph& graph = dfg.graph();
  std::vector<ValueId> values;
  if (dfg.is_host(producer)) {
    if (dfg.role(producer) == DataflowGraph::Role::kInput) values.push_back(dfg.value_id(producer));
  } else {
    for (ValueId out : dfg.node(producer).outputs) {
      if (out == kNoValue) continue;
      bool read = to_nodes == nullptr && graph.is_output(out);
      for (PostDfsIndex user : dfg.users(producer)) {
        if (read || to_nodes == nullptr || !to_nodes->contains(user)) continue;
        for (ValueId in : dfg.node(user).inputs) read |= in == out;
      }
      if (read) values.push_back(out);
    }
  }
  const Backend* producing = from.empty() ? nullptr : find(from);
  const Backend* reading = to_nodes == nullptr ? nullptr : find(to);
  BoundaryCharge charge;
  // The layout each side that follows layouts computes in; without it, the
  // boundary is charged nothing.
  std::optional<EdgeLayout> from_follows;
  std::optional<EdgeLayout> to_follows;
  if (follows(producing, dfg, from_nodes)) {
    if (placement) from_follows = followed_layout(dfg, *producing, *from_nodes, *placement);
    if (!from_follows) return charge;
  }
  if (follows(reading, dfg, to_nodes)) {
    if (placement) to_follows = followed_layout(dfg, *reading, *to_nodes, *placement);
    if (!to_follows) return charge;
  }
  auto in_layout_of = [&](EdgeLayout layout, const TensorType& type) {
    return edge_layout_fits(layout, type) ? layout : EdgeLayout::kPlain;
  };
  // Whether the reading side takes a value in `layout`: a follower when
  // its nodes run in it, another backend when it accepts it.
  const std::vector<NodeId> reader_ids =
      to_follows ? dfg.node_ids(*to_nodes) : std::vector<NodeId>{};
  auto reader_takes = [&](EdgeLayout layout) {
    return to_follows ? nodes_run_in_layout(*reading, graph, reader_ids, layout)
                      : reading->accepts_edge_layout(layout);
  };
  for (ValueId value : values) {
    const TensorType& type = graph.type(value);
    if (edge_layout_free(type)) continue;
    const bool output = graph.is_output(value);
    // How each side was timed, and what the plan will hand over. A graph
    // output is timed plain by its producer, a graph input by its readers
    // (Graph::model_edges, preferred_edges). A follower is charged as if
    // timed in the layout it computes in.
    EdgeLayout timed_out = EdgeLayout::kPlain;
    if (producing && !output) {
      timed_out =
          from_follows ? in_layout_of(*from_follows, type) : timed_edge_layout(*producing, type);
    }
    EdgeLayout timed_in = EdgeLayout::kPlain;
    if (reading && !dfg.is_host(producer)) {
      timed_in = to_follows ? in_layout_of(*to_follows, type) : timed_edge_layout(*reading, type);
    }
    EdgeLayout agreed = EdgeLayout::kPlain;
    if (producing && reading && !output) {
      if (from_follows) {
        // A follower offers the layout it computes in, or plain.
        if (timed_out != EdgeLayout::kPlain && reader_takes(timed_out)) agreed = timed_out;
      } else if (to_follows) {
        agreed = first_layout_taken(*producing, type, reader_takes);
      } else {
        agreed = agreed_edge_layout(*producing, {reading}, type);
      }
    }
    // Each side converts between the layout it was timed in and the agreed
    // one, its own way. A conversion between two non-plain layouts is taken
    // to cost one conversion from or to plain.
    if (timed_out != agreed) {
      const bool to_plain = timed_out != EdgeLayout::kPlain;
      charge.producer_seconds += conversions_.seconds(
          type, LayoutChange{to_plain ? timed_out : agreed, to_plain, producing});
    }
    if (timed_in != agreed) {
      const bool to_plain = timed_in == EdgeLayout::kPlain;
      charge.consumer_seconds +=
          conversions_.seconds(type, LayoutChange{to_plain ? agreed : timed_in, to_plain, reading});
    }
  }
  return charge;
}

}  // namespace collage
