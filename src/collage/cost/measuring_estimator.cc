#include "collage/cost/measuring_estimator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <set>

#include "collage/backends/compiles_ahead.h"
#include "collage/ir/error.h"
#include "collage/ir/flops.h"
#include "collage/ir/structural_hash.h"
#include "collage/partition/partition_spec.h"

namespace collage {
namespace {

// A rate bounds a candidate's cost once this many measurements of its kind
// of work were seen on its backend.
constexpr int kRatesBeforeBounding = 3;
// A candidate may run this much faster than the fastest rate its backend
// showed for its kind of work (a larger or better-shaped instance).
constexpr double kRateMargin = 1.25;

// How much work a partition is, and of what kind: its FLOPs (ir/flops.h),
// and the op type of the node that does most of them (a grouped
// convolution is a kind of its own); for a partition that only moves data
// (no FLOPs), the bytes it reads and writes, and the first node's op type.
struct Work {
  std::string kind;
  double amount = 0;
};

Work work_of(const Graph& partition) {
  Work work;
  std::int64_t heaviest = 0;
  try {
    for (const Node& node : partition.nodes()) {
      const std::int64_t flops = node_flops(partition, node);
      work.amount += static_cast<double>(flops);
      if (flops > heaviest) {
        heaviest = flops;
        work.kind = node.op_type;
        if (node.op_type == "Conv" && node.attributes.get_int("group", 1) > 1) {
          work.kind += "/grouped";
        }
      }
    }
  } catch (const Error&) {
    return {};
  }
  if (work.amount > 0 || partition.num_nodes() == 0) return work;
  work.kind = partition.nodes().front().op_type + "/bytes";
  for (const std::vector<ValueId>* edges : {&partition.inputs(), &partition.outputs()}) {
    for (ValueId id : *edges) {
      const TensorType& type = partition.type(id);
      work.amount +=
          static_cast<double>(type.numel()) * static_cast<double>(dtype_size(type.dtype));
    }
  }
  return work;
}

}  // namespace

Cost cost_from_cache(const CachedMeasurement& m) {
  if (!m.valid) return m.transient ? Cost::transient_invalid(m.reason) : Cost::invalid(m.reason);
  if (m.count <= 0) return Cost::value(m.seconds);
  return Cost::measured(m.seconds, m.p90_seconds, static_cast<std::size_t>(m.count));
}

CachedMeasurement cache_entry_from_cost(const Cost& cost) {
  if (!cost.is_valid()) {
    return CachedMeasurement{false, 0, 0, 0, cost.reason(), cost.is_transient()};
  }
  return CachedMeasurement{true, cost.seconds(), cost.p90_seconds(),
                           static_cast<int>(cost.samples()), ""};
}

MeasuringEstimator::MeasuringEstimator(Measurer& measurer, MeasurementCache* cache,
                                       std::string machine)
    : measurer_(measurer), cache_(cache), machine_(std::move(machine)) {}

std::string MeasuringEstimator::key_of(const DataflowGraph& dfg,
                                       const CandidatePartition& candidate,
                                       const Graph& partition) const {
  const Backend& backend = *candidate.spec->backend;
  std::string context = measurer_.context_of(dfg.graph(), candidate.sub_graph.node_ids(dfg));
  const std::string edges = model_edges_context(partition, backend);
  if (!edges.empty()) context = context.empty() ? edges : context + " " + edges;
  return measurement_key(structural_hash_hex(partition), measured_as(backend),
                         backend_version_key(backend),
                         context.empty() ? machine_ : machine_ + "|" + context);
}

std::vector<BatchMeasurer::Item> MeasuringEstimator::unmeasured(
    const DataflowGraph& dfg, const std::vector<CandidatePartition>& candidates,
    const std::function<bool(const Backend&)>& wanted) const {
  std::vector<BatchMeasurer::Item> items;
  std::set<std::string> seen;
  for (const CandidatePartition& candidate : candidates) {
    const Backend* backend = candidate.spec->backend;
    if (backend == nullptr || !wanted(*backend)) continue;
    Graph partition = candidate.sub_graph.extract(dfg);
    const std::string key = key_of(dfg, candidate, partition);
    if (!seen.insert(key).second || has_measurement(key)) continue;
    items.push_back({key, std::move(partition), backend, candidate.sub_graph.node_ids(dfg)});
  }
  return items;
}

void MeasuringEstimator::prefetch(const DataflowGraph& dfg,
                                  const std::vector<CandidatePartition>& candidates) {
  if (batch_ == nullptr) return;
  std::vector<BatchMeasurer::Item> items =
      unmeasured(dfg, candidates, [](const Backend&) { return true; });
  if (!items.empty()) measure_batch(dfg, std::move(items));
}

void MeasuringEstimator::prepare(const DataflowGraph& dfg,
                                 const std::vector<CandidatePartition>& candidates) {
  if (batch_ != nullptr) {
    prefetch(dfg, candidates);
    return;
  }
  // The partitions still to measure, per backend, each structure once.
  std::map<const Backend*, std::vector<Graph>> missing;
  for (BatchMeasurer::Item& item : unmeasured(dfg, candidates, [](const Backend& backend) {
         return compiles_ahead(backend) != nullptr;
       })) {
    // Screened, then timed in full: compiled once.
    if (!prepared_.insert(item.key).second) continue;
    missing[item.backend].push_back(std::move(item.partition));
  }
  for (auto& [backend, partitions] : missing) {
    if (prepare_report_) {
      prepare_report_(
          fmt::format("{}: compiling the kernels of {} candidates ahead of measuring them",
                      backend->name(), partitions.size()),
          0, 0);
    }
    const auto start = std::chrono::steady_clock::now();
    CompilesAhead::Progress progress;
    if (prepare_report_) {
      progress = [this, backend](std::size_t done, std::size_t total) {
        prepare_report_(backend->name() + " kernels", done, total);
      };
    }
    const std::size_t compiled =
        compiles_ahead(*backend)->prepare(partitions, CompileOptions{prepare_threads_}, progress);
    if (prepare_report_) {
      prepare_report_(
          fmt::format(
              "{}: {} kernels compiled in {:.1f} s", backend->name(), compiled,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()),
          0, 0);
    }
  }
}

BoundedCost MeasuringEstimator::bound(const DataflowGraph& dfg, const CandidatePartition& candidate,
                                      Fidelity at_least) {
  if (at_least == Fidelity::kExact || batch_ != nullptr) {
    return {estimate(dfg, candidate), Fidelity::kExact};
  }
  const Backend* backend = candidate.spec->backend;
  assert(backend != nullptr && "MeasuringEstimator: the candidate's spec has no backend");
  Graph partition = candidate.sub_graph.extract(dfg);
  const std::string key = key_of(dfg, candidate, partition);
  if (has_measurement(key)) {
    return {estimate(dfg, candidate), Fidelity::kExact};
  }
  const std::string screen_key = key + "|" + measurer_.screen_context();
  std::optional<Cost> screen;
  if (auto it = screens_.find(screen_key); it != screens_.end()) {
    screen = it->second;
  } else if (cache_ != nullptr) {
    if (auto cached = cache_->find(screen_key); cached && cached->valid) {
      ++counters_.cache_hits;
      screen = cost_from_cache(*cached);
      screens_.emplace(screen_key, *screen);
      learn_rate(*backend, partition, *screen);
    }
  }
  if (screen) return {*screen, Fidelity::kScreened};
  if (at_least == Fidelity::kBound) return {rate_bound(*backend, partition), Fidelity::kBound};

  Cost cost = measurer_.screen(dfg.graph(), candidate.sub_graph.node_ids(dfg), *backend);
  ++counters_.screened;
  if (!cost.is_valid()) {
    // What it could not do briefly it cannot do in full.
    ++counters_.measured;
    ++counters_.invalid;
    if (cost.is_transient()) counters_.failed_backends.insert(backend->name());
    remember(key, *backend, cost);
    return {cost, Fidelity::kExact};
  }
  screens_.emplace(screen_key, cost);
  learn_rate(*backend, partition, cost);
  store(screen_key, *backend, cost);
  return {cost, Fidelity::kScreened};
}

bool MeasuringEstimator::dear_to_screen(const CandidatePartition& candidate) const {
  return candidate.spec->backend != nullptr && compiles_ahead(*candidate.spec->backend) != nullptr;
}

void MeasuringEstimator::learn_rate(const Backend& backend, const Graph& partition,
                                    const Cost& cost) {
  if (!cost.is_valid() || cost.seconds() <= 0) return;
  const Work work = work_of(partition);
  if (work.amount <= 0) return;
  // The backend's own rate, and the machine's (any backend's).
  for (const std::string& name : {backend.name(), std::string()}) {
    Rate& rate = rates_[{name, work.kind}];
    rate.per_second = std::max(rate.per_second, work.amount / cost.seconds());
    ++rate.seen;
  }
}

Cost MeasuringEstimator::rate_bound(const Backend& backend, const Graph& partition) const {
  const Work work = work_of(partition);
  if (work.amount <= 0) return Cost::zero();
  // The backend's own rate once it has shown one, else the machine's.
  for (const std::string& name : {backend.name(), std::string()}) {
    auto it = rates_.find({name, work.kind});
    if (it != rates_.end() && it->second.seen >= kRatesBeforeBounding) {
      return Cost::value(work.amount / (it->second.per_second * kRateMargin));
    }
  }
  return Cost::zero();
}

Cost MeasuringEstimator::estimate(const DataflowGraph& dfg, const CandidatePartition& candidate) {
  ++counters_.requests;
  const Backend* backend = candidate.spec->backend;
  assert(backend != nullptr && "MeasuringEstimator: the candidate's spec has no backend");
  Graph partition = candidate.sub_graph.extract(dfg);
  const std::string key = key_of(dfg, candidate, partition);

  if (auto it = memo_.find(key); it != memo_.end()) {
    ++counters_.memo_hits;
    if (!it->second.is_valid()) ++counters_.invalid;
    return it->second;
  }
  if (cache_ != nullptr) {
    // A transient failure (a crash, a time-out) of an earlier run is
    // measured again; within this run the memo keeps the first answer.
    if (auto cached = cache_->find(key); cached && !cached->transient) {
      ++counters_.cache_hits;
      Cost cost = cost_from_cache(*cached);
      if (!cost.is_valid()) ++counters_.invalid;
      memo_.emplace(key, cost);
      learn_rate(*backend, partition, cost);
      return cost;
    }
  }
  if (batch_ != nullptr) {
    Cost cost = measure_batch(
                    dfg, {{key, std::move(partition), backend, candidate.sub_graph.node_ids(dfg)}})
                    .front();
    if (!cost.is_valid()) ++counters_.invalid;
    return cost;
  }
  Cost cost = measure(dfg, candidate);
  ++counters_.measured;
  if (!cost.is_valid()) ++counters_.invalid;
  if (cost.is_transient()) counters_.failed_backends.insert(backend->name());
  remember(key, *backend, cost);
  learn_rate(*backend, partition, cost);
  return cost;
}

std::vector<Cost> MeasuringEstimator::measure_batch(const DataflowGraph& dfg,
                                                    std::vector<BatchMeasurer::Item> items) {
  assert(cache_ != nullptr && "MeasuringEstimator: measuring by batch needs a cache");
  std::vector<std::pair<std::string, std::string>> keys;
  for (const BatchMeasurer::Item& item : items) keys.emplace_back(item.key, item.backend->name());
  batch_->measure_all(dfg.graph(), std::move(items));
  std::vector<Cost> costs;
  for (const auto& [key, backend] : keys) {
    std::optional<CachedMeasurement> cached = cache_->find(key);
    Cost cost = cached ? cost_from_cache(*cached)
                       : Cost::transient_invalid(backend + ": no measurement came back");
    ++counters_.measured;
    if (cost.is_transient()) counters_.failed_backends.insert(backend);
    memo_.insert_or_assign(key, cost);
    costs.push_back(std::move(cost));
  }
  return costs;
}

Cost MeasuringEstimator::retime(const DataflowGraph& dfg, const CandidatePartition& candidate,
                                Keep keep) {
  if (keep == Keep::kNeither) return measure(dfg, candidate);
  const Cost before = estimate(dfg, candidate);
  if (!before.is_valid()) return before;
  const std::string key = key_of(dfg, candidate, candidate.sub_graph.extract(dfg));
  Cost again = measure(dfg, candidate);
  ++counters_.retimed;
  if (!again.is_valid()) return before;
  if (keep == Keep::kFaster && again.seconds() >= before.seconds()) return before;
  remember(key, *candidate.spec->backend, again);
  return again;
}

Cost MeasuringEstimator::measure(const DataflowGraph& dfg, const CandidatePartition& candidate) {
  return measurer_.measure(dfg.graph(), candidate.sub_graph.node_ids(dfg),
                           *candidate.spec->backend);
}

bool MeasuringEstimator::has_measurement(const std::string& key) const {
  if (memo_.count(key) != 0) return true;
  if (cache_ == nullptr) return false;
  std::optional<CachedMeasurement> cached = cache_->find(key);
  return cached && !cached->transient;
}

void MeasuringEstimator::remember(const std::string& key, const Backend& backend,
                                  const Cost& cost) {
  memo_.insert_or_assign(key, cost);
  store(key, backend, cost);
}

void MeasuringEstimator::store(const std::string& key, const Backend& backend, const Cost& cost) {
  if (cache_ == nullptr) return;
  CachedMeasurement entry = cache_entry_from_cost(cost);
  entry.backend = backend.name();
  entry.backend_version = backend_version_key(backend);
  entry.machine = machine_;
  cache_->store(key, entry);
}

}  // namespace collage
