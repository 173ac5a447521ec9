// Trace: timed spans of a plan's run, for the in-context profile.
//
// The measured cost of a candidate is its kernel timed alone; in a plan
// the same kernel runs between other backends' kernels, and the
// time between and around partitions (layout conversions at the edges,
// copies into staging buffers, allocations, waking a thread pool) is where
// a plan loses to the sum of its parts. A TraceRecorder collects one span
// per partition per run from the executor, and kernels add spans for the
// boundary work they do inside (ScopedSpan), so that work shows up as its
// own events. Spans are written in Chrome's trace-event format (the one
// ONNX Runtime's profiler writes), which Perfetto and chrome://tracing open.
//
// Recording is off unless a recorder is installed on the running thread
// (TraceRecorder::Install); a ScopedSpan then costs one thread-local load.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace collage {

// What a span's time is spent on.
enum class SpanKind {
  kRun,        // one whole run of the plan
  kPartition,  // a partition's kernel, as the executor called it
  kLayout,     // converting a tensor between layouts (NCHW <-> NHWC, blocked)
  kCopy,       // copying a tensor into or out of a staging buffer
  kAllocate,   // allocating tensors while running
  kDispatch,   // the executor's own work between kernels
  kOp,         // one op (or fused chain) inside a partition's kernel
};

std::string span_kind_name(SpanKind kind);

struct TraceSpan {
  std::string name;
  SpanKind kind = SpanKind::kPartition;
  // Microseconds since the recorder was made.
  double start_us = 0;
  double duration_us = 0;
  // Which run of the plan, and which partition (-1: none), the span is in.
  int run = 0;
  int partition = -1;
  // Extra key/value pairs shown with the event (backend, ops, estimate).
  std::vector<std::pair<std::string, std::string>> args;
};

class TraceRecorder {
 public:
  using Clock = std::chrono::steady_clock;

  TraceRecorder();

  // Makes `recorder` receive the spans of the calling thread until the guard
  // goes out of scope (nullptr: record nothing).
  class Install {
   public:
    explicit Install(TraceRecorder* recorder);
    ~Install();
    Install(const Install&) = delete;
    Install& operator=(const Install&) = delete;

   private:
    TraceRecorder* previous_;
  };
  // The recorder installed on this thread, or nullptr.
  static TraceRecorder* current();

  void add(TraceSpan span) { spans_.push_back(std::move(span)); }
  double micros_since_start(Clock::time_point t) const;

  // Marks the run and partition that spans recorded from now on belong to.
  void set_position(int run, int partition) {
    run_ = run;
    partition_ = partition;
  }
  int run() const { return run_; }
  int partition() const { return partition_; }

  const std::vector<TraceSpan>& spans() const { return spans_; }

 private:
  Clock::time_point origin_;
  std::vector<TraceSpan> spans_;
  int run_ = 0;
  int partition_ = -1;
};

// Records the enclosing scope as a span of `kind` on the thread's recorder,
// if one is installed.
class ScopedSpan {
 public:
  ScopedSpan(const char* name, SpanKind kind)
      : recorder_(TraceRecorder::current()), name_(name), kind_(kind) {
    if (recorder_ != nullptr) start_ = TraceRecorder::Clock::now();
  }
  // A span that also names the graph node it runs (args "node").
  ScopedSpan(const char* name, SpanKind kind, const char* node) : ScopedSpan(name, kind) {
    node_ = node;
  }
  ~ScopedSpan();
  ScopedSpan(const ScopedSpan&) = delete;
  ScopedSpan& operator=(const ScopedSpan&) = delete;

 private:
  TraceRecorder* recorder_;
  const char* name_;
  const char* node_ = nullptr;
  SpanKind kind_;
  TraceRecorder::Clock::time_point start_;
};

// Spans as a Chrome trace-event JSON document ("X" complete events,
// microseconds, one thread).
std::string to_chrome_json(const std::vector<TraceSpan>& spans);

// Reads a Chrome trace-event file written from to_chrome_json(). Throws Error
// naming the file when it is not one.
std::vector<TraceSpan> read_chrome_trace(const std::string& path);

}  // namespace collage
