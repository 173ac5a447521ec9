// MeasuringEstimator: candidate costs by measurement, with a persistent cache.
//
// The default estimator of `collage tune`. For a candidate it builds the
// cache key (structural hash of the extracted partition, backend name,
// library version and code version, and the measurement context: machine
// fingerprint, timing protocol, threading environment), answers from this
// run's memo or the persistent cache when it can, and otherwise asks the
// Measurer and stores the result at once. Identical partitions (every
// bottleneck block of a ResNet) are therefore measured once per machine and
// build, ever. Transient failures in the cache (a crash, a time-out) are
// measured again.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collage/cost/cache_keys.h"
#include "collage/cost/cost_estimator.h"
#include "collage/cost/measurement_cache.h"
#include "collage/cost/measurer.h"

namespace collage {

struct EstimatorCounters {
  // estimate() calls.
  int requests = 0;
  // Distinct partitions actually measured in this run.
  int measured = 0;
  // Answered by the persistent cache (a measurement, or a screen).
  int cache_hits = 0;
  // Answered by an identical partition measured earlier in this run.
  int memo_hits = 0;
  // Invalid results (measured or cached).
  int invalid = 0;
  // Timed again and kept (retime() with Keep::kFaster or kNewer).
  int retimed = 0;
  // Screened (bound() at Fidelity::kScreened) in this run: timed briefly
  // and not (yet) in full. Not counted in `measured`.
  int screened = 0;
  // Backends a measurement of which crashed or hung the measuring worker
  // in this run (a transient invalid cost).
  std::set<std::string> failed_backends;
};

// Measures many candidates at once, elsewhere: a fleet of `collage worker`
// processes that share the cache (session/fleet.h). Each result lands in
// the cache under its key.
class BatchMeasurer {
 public:
  struct Item {
    // The measurement's cache key.
    std::string key;
    Graph partition;
    const Backend* backend = nullptr;
    // The partition's nodes in the model (what eviction_bytes() reads).
    std::vector<NodeId> nodes;
  };
  virtual ~BatchMeasurer() = default;
  // Returns once the cache holds a measurement (or a failure) of each item.
  virtual void measure_all(const Graph& model, std::vector<Item> items) = 0;
};

class MeasuringEstimator : public CostEstimator {
 public:
  // `cache` may be null (no persistence). `machine` is the measurement
  // context (see measurement_context()): part of every key.
  MeasuringEstimator(Measurer& measurer, MeasurementCache* cache, std::string machine);

  Cost estimate(const DataflowGraph& dfg, const CandidatePartition& candidate) override;
  // A measurement in the memo or the cache is kExact. Otherwise a screen
  // (Measurer::screen(), cached like a measurement under its own key) is
  // kScreened; at kBound without one, the candidate's FLOPs (bytes read
  // and written, for a partition that only moves data) at the fastest rate
  // its backend has shown in this run for work of that kind (the op type
  // that does most of it), with a margin, once three such measurements
  // were seen; before, at the fastest rate any backend has shown for it
  // (the machine's peak for that work, as far as measured), once three
  // were seen; 0 before that. A screen that fails is
  // the candidate's kExact cost. With a batch measurer, estimate().
  BoundedCost bound(const DataflowGraph& dfg, const CandidatePartition& candidate,
                    Fidelity at_least) override;
  // A candidate of a backend that compiles ahead (CompilesAhead: Halide).
  bool dear_to_screen(const CandidatePartition& candidate) const override;
  // Has each backend that compiles ahead (CompilesAhead::prepare) compile the
  // candidates that are neither in the cache nor measured in this run,
  // with the threads the measurer compiles them with (prepare_with).
  void prepare(const DataflowGraph& dfg,
               const std::vector<CandidatePartition>& candidates) override;
  // With a batch measurer (measure_with()), measures those of `candidates`
  // the cache lacks, together; otherwise does nothing.
  void prefetch(const DataflowGraph& dfg,
                const std::vector<CandidatePartition>& candidates) override;
  // What prepare() reports of a backend's compiling: a line before and
  // after (done and total 0), and how many candidates are done of how many
  // as each is.
  using PrepareReport =
      std::function<void(const std::string& line, std::size_t done, std::size_t total)>;
  // `report` (optional) hears of each backend's work.
  void prepare_with(int threads, PrepareReport report) {
    prepare_threads_ = threads;
    prepare_report_ = std::move(report);
  }

  // What retime() does with the new measurement.
  enum class Keep {
    // Keeps the faster of the two measurements, in this run's memo and in
    // the cache. For a candidate whose measurement a profile of a plan
    // contradicts: a measurement taken while the machine was slow (a noisy
    // neighbour, a slow spell) stays in the cache for good, and steers
    // every later search away from the candidate. Interference only adds
    // time, so the faster of two measurements is the better one.
    kFaster,
    // Keeps the new measurement in place of the one before. For the parts
    // of a plan made from measurements of an earlier run: the machine's
    // speed drifts by a quarter over hours, and an estimate from the old
    // measurements describes the machine as it ran then, faster or slower.
    kNewer,
    // Keeps neither: what the candidate costs at the machine's present
    // speed, for an estimate compared with a run that follows.
    kNeither,
  };
  // Times `candidate` again, the way estimate() measured it, and keeps
  // what `keep` says. Returns the measurement kept (with kFaster and
  // kNewer, the one before when the new one is not valid), or with
  // kNeither the new one.
  Cost retime(const DataflowGraph& dfg, const CandidatePartition& candidate, Keep keep);

  const EstimatorCounters& counters() const { return counters_; }

  // From now on, candidates missing from the cache are measured by `batch`
  // (not owned; null: by the measurer, one at a time): in prepare(), all
  // at once, without compiling ahead here; in estimate(), one by one.
  // Needs a cache, where `batch` leaves its results.
  void measure_with(BatchMeasurer* batch) { batch_ = batch; }

 private:
  // The cache key of `candidate` (extracted as `partition`) measured here.
  std::string key_of(const DataflowGraph& dfg, const CandidatePartition& candidate,
                     const Graph& partition) const;
  // Whether this run's memo or the cache holds a lasting measurement under
  // `key` (a transient failure in the cache is measured again).
  bool has_measurement(const std::string& key) const;
  // Puts `cost` into the cache (if any) under `key`.
  void store(const std::string& key, const Backend& backend, const Cost& cost);
  // Puts `cost` into the memo and the cache under `key`.
  void remember(const std::string& key, const Backend& backend, const Cost& cost);
  // Measures `candidate` with the measurer.
  Cost measure(const DataflowGraph& dfg, const CandidatePartition& candidate);
  // The valid measurement or screen `cost` of `partition` on `backend`
  // teaches the fastest rate seen of its kind of work.
  void learn_rate(const Backend& backend, const Graph& partition, const Cost& cost);
  // The lower bound bound() gives at kBound.
  Cost rate_bound(const Backend& backend, const Graph& partition) const;
  // The candidates of `candidates` on a backend `wanted` accepts that
  // neither this run's memo nor the cache holds a lasting measurement of,
  // each key once.
  std::vector<BatchMeasurer::Item> unmeasured(
      const DataflowGraph& dfg, const std::vector<CandidatePartition>& candidates,
      const std::function<bool(const Backend&)>& wanted) const;
  // Has batch_ measure `items` and takes their results from the cache into
  // this run's memo; returns the cost of each.
  std::vector<Cost> measure_batch(const DataflowGraph& dfg, std::vector<BatchMeasurer::Item> items);

  Measurer& measurer_;
  MeasurementCache* cache_;
  std::string machine_;
  std::map<std::string, Cost> memo_;
  EstimatorCounters counters_;
  int prepare_threads_ = 1;
  PrepareReport prepare_report_;
  BatchMeasurer* batch_ = nullptr;
  // The keys of the candidates prepare() had compiled ahead.
  std::set<std::string> prepared_;
  // Screens of this run, by measurement key.
  std::map<std::string, Cost> screens_;
  // The fastest rate (FLOPs, or bytes for work that only moves data, per
  // second) seen per backend ("": any backend) and kind of work, and how
  // many measurements of that kind were seen.
  struct Rate {
    double per_second = 0;
    int seen = 0;
  };
  std::map<std::pair<std::string, std::string>, Rate> rates_;
};

// A cached measurement as a Cost (a transient failure stays transient), and
// back.
Cost cost_from_cache(const CachedMeasurement& measurement);
CachedMeasurement cache_entry_from_cost(const Cost& cost);

}  // namespace collage
