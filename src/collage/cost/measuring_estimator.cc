#include "collage/cost/measuring_estimator.h"

#include <fmt/format.h>

#include <cassert>
#include <chrono>
#include <set>

#include "collage/backends/compiles_ahead.h"
#include "collage/ir/structural_hash.h"
#include "collage/partition/partition_spec.h"

namespace collage {

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
  return measurement_key(structural_hash_hex(partition), backend.name(),
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
    if (memo_.count(key) != 0 || !seen.insert(key).second) continue;
    if (cache_ != nullptr) {
      if (auto cached = cache_->find(key); cached && !cached->transient) continue;
    }
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

void MeasuringEstimator::remember(const std::string& key, const Backend& backend,
                                  const Cost& cost) {
  memo_.insert_or_assign(key, cost);
  if (cache_ == nullptr) return;
  CachedMeasurement entry = cache_entry_from_cost(cost);
  entry.backend = backend.name();
  entry.backend_version = backend_version_key(backend);
  entry.machine = machine_;
  cache_->store(key, entry);
}

}  // namespace collage
