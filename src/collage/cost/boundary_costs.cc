#include "collage/cost/boundary_costs.h"

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collage/cost/cache_keys.h"
#include "collage/cost/measurer.h"
#include "collage/runtime/layout_convert.h"
#include "collage/runtime/timing.h"

namespace collage {
namespace {

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

BoundaryCharge LayoutBoundaryCosts::charge(const DataflowGraph& dfg, PostDfsIndex producer,
                                           const std::string& from, const IndexSet* from_nodes,
                                           const IndexSet* to_nodes, const std::string& to) {
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
  if (follows(producing, dfg, from_nodes) || follows(reading, dfg, to_nodes)) return charge;
  for (ValueId value : values) {
    const TensorType& type = graph.type(value);
    if (edge_layout_free(type)) continue;
    // How each side was timed, and what the plan will hand over. A graph
    // output is timed plain by its producer, a graph input by its readers
    // (Graph::model_edges, preferred_edges).
    const EdgeLayout timed_out = producing && !graph.is_output(value)
                                     ? timed_edge_layout(*producing, type)
                                     : EdgeLayout::kPlain;
    const EdgeLayout timed_in =
        reading && !dfg.is_host(producer) ? timed_edge_layout(*reading, type) : EdgeLayout::kPlain;
    const EdgeLayout agreed = producing && reading && !graph.is_output(value)
                                  ? agreed_edge_layout(*producing, {reading}, type)
                                  : EdgeLayout::kPlain;
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
