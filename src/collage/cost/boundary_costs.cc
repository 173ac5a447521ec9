#include "collage/cost/boundary_costs.h"

#include <fmt/format.h>

#include <vector>

#include "collage/cost/measurer.h"
#include "collage/ir/block_transpose.h"
#include "collage/runtime/timing.h"

namespace collage {
namespace {

// Copies a plain [N,C,H,W] tensor into `layout` (channels-last or blocked)
// as the backends' own conversions do (a library reorder, XNNPACK's tiled
// transposes): each group of channels (all of them for channels-last, one
// block for blocked) is a [channels, H*W] matrix transposed to [H*W,
// channels], in square tiles, in parallel.
void convert(const float* src, float* dst, const Shape& s, EdgeLayout layout, int threads) {
  const std::int64_t channels = s[1];
  const std::int64_t rows =
      layout == EdgeLayout::kChannelsLast ? channels : edge_layout_block(layout);
  const BatchedTranspose job(src, dst, s[0] * (channels / rows), rows, s[2] * s[3]);
  const std::int64_t tasks = job.tasks();
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (std::int64_t task = 0; task < tasks; ++task) job.tile(task);
}

}  // namespace

double ConversionCosts::seconds(const TensorType& type, EdgeLayout layout) {
  if (layout == EdgeLayout::kPlain || edge_layout_free(type) || !edge_layout_fits(layout, type)) {
    return 0.0;
  }
  const auto memo_key = std::make_pair(type.to_string(), layout);
  if (auto it = known_.find(memo_key); it != known_.end()) return it->second;
  const std::string key =
      fmt::format("layout conversion|{}|{}|t{}|tiled|trimmed-mean|{}", edge_layout_name(layout),
                  type.to_string(), threads_, machine_);
  double result = 0.0;
  std::optional<CachedMeasurement> cached = cache_ ? cache_->find(key) : std::nullopt;
  if (cached && cached->valid) {
    result = cached->seconds;
  } else {
    result = measure(type, layout);
    if (cache_) cache_->store(key, CachedMeasurement::of_value(result));
  }
  known_.emplace(memo_key, result);
  return result;
}

double ConversionCosts::measure(const TensorType& type, EdgeLayout layout) {
  const auto count = static_cast<std::size_t>(type.numel());
  std::vector<float> src(count, 1.0f);
  std::vector<float> dst(count);
  // The source is written first, as a producer would have just done.
  TimingResult timing = time_function(
      [&] {
        src[count / 2] += 1.0f;
        convert(src.data(), dst.data(), type.shape, layout, threads_);
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

BoundaryCharge LayoutBoundaryCosts::charge(const DataflowGraph& dfg, PostDfsIndex producer,
                                           const std::string& from, const IndexSet* to_nodes,
                                           const std::string& to) {
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
  for (ValueId value : values) {
    const TensorType& type = graph.type(value);
    if (edge_layout_free(type)) continue;
    // How each side was timed, and what the plan will hand over.
    const EdgeLayout timed_out =
        producing ? timed_edge_layout(*producing, type) : EdgeLayout::kPlain;
    const EdgeLayout timed_in = reading ? timed_edge_layout(*reading, type) : EdgeLayout::kPlain;
    const EdgeLayout agreed = producing && reading && !graph.is_output(value)
                                  ? agreed_edge_layout(*producing, {reading}, type)
                                  : EdgeLayout::kPlain;
    // A conversion between two non-plain layouts is taken to cost one
    // transpose, like a conversion from or to plain.
    if (timed_out != agreed) {
      charge.producer_seconds +=
          conversions_.seconds(type, timed_out != EdgeLayout::kPlain ? timed_out : agreed);
    }
    if (timed_in != agreed) {
      charge.consumer_seconds +=
          conversions_.seconds(type, timed_in != EdgeLayout::kPlain ? timed_in : agreed);
    }
  }
  return charge;
}

}  // namespace collage
