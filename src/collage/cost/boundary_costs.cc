#include "collage/cost/boundary_costs.h"

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collage/cost/cache_keys.h"
#include "collage/cost/measurer.h"
#include "collage/ir/block_transpose.h"
#include "collage/runtime/timing.h"

namespace collage {
namespace {

// Converts a [N,C,H,W] tensor between plain and `layout` (channels-last or
// blocked) as XNNPACK's kernels do: each group of channels (all of them for
// channels-last, one block for blocked) is a [channels, H*W] matrix
// transposed to [H*W, channels] (or back), in square tiles, in parallel.
// T is float, or a byte for 8-bit values.
template <typename T>
void tiled_convert(const T* src, T* dst, const Shape& s, const LayoutChange& change, int threads) {
  const std::int64_t channels = s[1];
  const std::int64_t group =
      change.layout == EdgeLayout::kChannelsLast ? channels : edge_layout_block(change.layout);
  const std::int64_t batches = s[0] * (channels / group);
  const std::int64_t pixels = s[2] * s[3];
  using Job = BatchedTransposeOf<T>;
  const Job job = change.to_plain ? Job(src, dst, batches, pixels, group)
                                  : Job(src, dst, batches, group, pixels);
  const std::int64_t tasks = job.tasks();
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (std::int64_t task = 0; task < tasks; ++task) job.tile(task);
}

// The same for a tensor of `type`: float32, or 8-bit (edge_layout_fits).
void tiled_convert(const TensorType& type, const void* src, void* dst, const LayoutChange& change,
                   int threads) {
  if (type.dtype == DType::kFloat32) {
    tiled_convert(static_cast<const float*>(src), static_cast<float*>(dst), type.shape, change,
                  threads);
  } else {
    tiled_convert(static_cast<const std::uint8_t*>(src), static_cast<std::uint8_t*>(dst),
                  type.shape, change, threads);
  }
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
          tiled_convert(type, src.data(), dst.data(), change, threads_);
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
