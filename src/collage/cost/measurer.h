// Measurer: compiles one partition with a backend, checks it, and times it.
//
// This is where a candidate's cost comes from. The partition (a set of nodes
// of the model) is extracted as a standalone Graph, compiled with the
// backend, run on deterministic pseudo-random inputs and compared with the
// reference backend's outputs, then timed under the timing protocol. Any
// failure (no kernel, wrong numbers, an exception) is a Cost::invalid with
// the reason, never an exception out of measure().
//
// Two implementations: InProcessMeasurer does the work in this process;
// WorkerMeasurer sends it to a `collage worker` process (which runs an
// InProcessMeasurer) so that a backend that crashes or hangs costs one
// candidate, not the run. Both speak through the same one-line JSON
// protocol functions below.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collage/backends/backend.h"
#include "collage/cost/cache_state.h"
#include "collage/cost/cost.h"
#include "collage/cost/worker_process.h"
#include "collage/ir/graph.h"
#include "collage/runtime/timing.h"

namespace collage {

struct MeasureOptions {
  int threads = 1;
  TimingOptions timing = default_candidate_timing();
  // Outputs must agree with the reference within
  // atol + rtol * (largest magnitude of the reference output).
  double rtol = 1e-3;
  double atol = 1e-5;
  // A worker that takes longer than this for one candidate is killed.
  double timeout_seconds = 60;
  // Time each call in the caches a plan leaves: after streaming what the
  // rest of the model touches through them (cost/cache_state.h). Off, a
  // candidate is timed back to back, with its weights in cache.
  bool plan_caches = true;
  // With plan_caches: after evicting and before each timed call, run a twin
  // of the candidate (compiled again, with its own weights, inputs and
  // outputs), as a partition in a plan runs right after another of its
  // backend, usually of its own kind: the backend's code, the kernel's code
  // and the thread pool are warm, the candidate's own data are not. Only
  // for a candidate that touches fewer bytes than are evicted before it
  // (twin_runs_before()): one that is most of its model runs in a plan
  // after the small rest, not after as much again, and a twin's data
  // evicted it further than the plan does (EfficientNet-B0's 189-node
  // oneDNN region: 7.12 ms after a twin, 6.36 without, 6.43 in context).
  bool twin_before = true;
  // With plan_caches: the state the candidate's edges are left in right
  // before each timed call, after the twin.
  enum class Edges {
    // Inputs and outputs read (the protocol before kInputsWritten).
    kRead,
    // Inputs written, as their producer in a plan has just written them
    // (modified in the writers' private caches); outputs left as the
    // eviction and the twin leave them. A read leaves an input's lines
    // clean, and a partition's threads fetch clean lines sooner than
    // lines another core holds modified: timed after reads, BERT's
    // partitions summed 3 to 7 % under their time in a plan, after writes
    // within 2 % (bench/results/plan_caches-2026-11-27.md;
    // docs/partitioning.md, "Measurement").
    kInputsWritten,
  };
  Edges edges = Edges::kInputsWritten;

  // A screen's timing (Measurer::screen()): a first look, a few calls.
  TimingOptions screen_timing = default_screen_timing();

  // A tighter protocol than the end-to-end one: there are many candidates.
  static TimingOptions default_candidate_timing();
  // One warm-up call and three timed ones, whatever they show.
  static TimingOptions default_screen_timing();
};

// What a measurement depends on besides the partition and the backend, as
// text for cache keys: the machine fingerprint (`machine`), the timing
// protocol and tolerances of `options`, and the threading environment the
// OpenMP and pthreadpool runtimes read (GOMP_SPINCOUNT, OMP_WAIT_POLICY,
// OMP_PROC_BIND, OMP_PLACES, GOMP_CPU_AFFINITY). A change of any of them
// makes earlier measurements incomparable, so they are not reused. With
// plan_caches, each candidate's key also carries its eviction_bytes()
// (candidate_context()).
std::string measurement_context(const std::string& machine, const MeasureOptions& options);

// What a screen's key adds to its measurement's (Measurer::screen()): the
// screen's timing protocol and the cost it reports.
std::string screen_context(const MeasureOptions& options);

// The options a candidate is timed with: every 4-D edge that the layout
// the backend computes in (the first of its edge_layouts() that fits) is stored in that
// layout, as it is between two partitions of that backend in a plan
// (negotiate_edge_layouts); no edge layouts when there is none. A
// partition that follows its neighbours' layouts (follows_layouts, such as
// native's pools and elementwise chains) is timed with its laid-out edges
// in the search's layout (Backend::search_layout) where they fit it, else
// in channels-last, as it runs beside a library that computes in it. The
// partition's model edges (the model's own inputs and outputs,
// Graph::model_edges) are timed plain, as a plan hands them over.
CompileOptions preferred_edges(const Graph& partition, const Backend& backend, int threads);

// What a partition's model edges add to the key of its measurement by
// `backend`: "plain=i0,o1", the positions among its inputs and outputs of
// those that preferred_edges times plain only because they are model edges;
// "" when there are none (the same timing as a partition without them).
std::string model_edges_context(const Graph& partition, const Backend& backend);

// What a measurement of the candidate of `nodes` in `model` depends on
// beyond measurement_context(): with plan_caches, how much is evicted
// before each call ("" without).
std::string candidate_context(const Graph& model, const std::vector<NodeId>& nodes,
                              const MeasureOptions& options);

// The worker protocol: one JSON object per line each way (encode_measure_request()).
struct MeasureRequest {
  std::vector<std::string> nodes;
  std::string backend;
  // Measurer::screen() rather than measure().
  bool screen = false;
};

class Measurer {
 public:
  virtual ~Measurer() = default;
  // The cost of running `nodes` of `model` as one partition on `backend`.
  virtual Cost measure(const Graph& model, const std::vector<NodeId>& nodes,
                       const Backend& backend) = 0;
  // A first look at the same cost, several times cheaper: compiled and
  // checked as measure() does, then timed for a few calls only
  // (MeasureOptions::screen_timing), reporting the fastest. Close to
  // measure()'s cost, below it but for the timing's noise. The default
  // measures.
  virtual Cost screen(const Graph& model, const std::vector<NodeId>& nodes,
                      const Backend& backend) {
    return measure(model, nodes, backend);
  }
  // What screen() adds to the cache key (screen_context()).
  virtual std::string screen_context() const { return "screen=measure"; }
  // What measure() of these nodes depends on beyond the partition, the
  // backend and measurement_context(), for cache keys (candidate_context()).
  virtual std::string context_of(const Graph& /*model*/,
                                 const std::vector<NodeId>& /*nodes*/) const {
    return "";
  }
};

class InProcessMeasurer : public Measurer {
 public:
  // `reference` computes the expected outputs (the native backend).
  InProcessMeasurer(const Backend& reference, MeasureOptions options);
  Cost measure(const Graph& model, const std::vector<NodeId>& nodes,
               const Backend& backend) override;
  Cost screen(const Graph& model, const std::vector<NodeId>& nodes,
              const Backend& backend) override;
  std::string context_of(const Graph& model, const std::vector<NodeId>& nodes) const override {
    return candidate_context(model, nodes, options_);
  }
  std::string screen_context() const override { return collage::screen_context(options_); }
  // How measure_partition() times.
  enum class Timing { kFull, kScreen };
  // The same for a partition already extracted as a standalone Graph,
  // timed after evicting `evict_bytes` before each call (none: back to back).
  Cost measure_partition(const Graph& partition, const Backend& backend,
                         std::size_t evict_bytes = 0, Timing timing = Timing::kFull);

 private:
  const Backend& reference_;
  MeasureOptions options_;
  CacheEvictor evictor_;
};

class WorkerMeasurer : public Measurer {
 public:
  // `worker_command` starts a process that reads encode_measure_request()
  // lines for this model and answers each with encode_measure_reply().
  WorkerMeasurer(std::vector<std::string> worker_command, MeasureOptions options);
  Cost measure(const Graph& model, const std::vector<NodeId>& nodes,
               const Backend& backend) override;
  Cost screen(const Graph& model, const std::vector<NodeId>& nodes,
              const Backend& backend) override;
  std::string context_of(const Graph& model, const std::vector<NodeId>& nodes) const override {
    return candidate_context(model, nodes, options_);
  }
  std::string screen_context() const override { return collage::screen_context(options_); }
  int worker_starts() const { return worker_.starts(); }

 private:
  // Sends `request` to the worker and reads its reply.
  Cost ask(const MeasureRequest& request);

  WorkerProcess worker_;
  MeasureOptions options_;
};

std::string encode_measure_request(const MeasureRequest& request);
// Throws Error on a malformed line.
MeasureRequest decode_measure_request(const std::string& line);
std::string encode_measure_reply(const Cost& cost);
// A malformed reply is an invalid cost saying so.
Cost decode_measure_reply(const std::string& line);

// How far `actual` is from `expected`, as a reason when it is too far:
// beyond atol + rtol x the largest finite magnitude of `expected`. Infinities
// must match exactly, and NaN matches only NaN.
// 8-bit outputs (quantized values) may differ by one: a backend that
// requantizes in another precision rounds a value within float error of a
// half to the other neighbour.
// With `relative_rms` above 0, outputs beyond that elementwise tolerance
// still agree when the root mean square of the difference is at most
// relative_rms x that of `expected` (and infinities and NaNs match).
std::optional<std::string> compare_outputs(const Tensor& actual, const Tensor& expected,
                                           double rtol, double atol, double relative_rms = 0);

// How closely two whole plans' outputs must agree.
struct PlanTolerance {
  double rtol = 1e-3;
  // 0: elementwise only (compare_outputs).
  double relative_rms = 0;
};

// 1e-3 elementwise; for a model that computes on 8-bit values, 2e-2, or a
// difference whose RMS is at most 15 % of the output's. There one step of
// difference inside the model, where two exact-enough int8 kernels round a
// half differently, moves every value after it, and the steps add up with
// depth: MobileNet-V2 int8 (52 quantized convolutions) differs from the exact
// native kernels by 6.5 % RMS on oneDNN, XNNPACK and ONNX Runtime alike,
// 8 output steps at most. A kernel that computes the wrong thing differs by
// about 100 %; each int8 partition is also checked on its own, within one
// step of its 8-bit outputs, when it is measured.
PlanTolerance plan_output_tolerance(const Graph& model);

}  // namespace collage
