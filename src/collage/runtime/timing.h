// Timing: the measurement protocol every latency in the project goes through.
//
// Warm up, then take samples until the median is stable or the time budget
// is spent, and report the median with its spread. Very short kernels are
// timed in batches so that one sample is long enough for the clock, and the
// per-call time is the batch time divided by its size. One protocol for the
// tuner's candidate costs and for end-to-end comparisons keeps the numbers
// comparable.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

namespace collage {

struct TimingOptions {
  // Untimed runs before sampling (at least this many, and at least warmup_seconds).
  int warmup_runs = 2;
  double warmup_seconds = 0.02;
  int min_samples = 7;
  int max_samples = 100;
  // Sampling stops once this much time was spent (after min_samples).
  double budget_seconds = 1.0;
  // Stop early when the running median moved less than this fraction
  // across the last few samples.
  double stable_fraction = 0.02;
  // A sample lasts at least this long; shorter calls are batched.
  double min_sample_seconds = 2e-4;
};

struct TimingResult {
  double median_seconds = 0;
  // The mean of the samples without the slowest tenth (the slowest one of
  // 5 to 10 samples; none of fewer). What a part adds to a whole: the
  // median of a sum of many skewed times is near the sum of their means,
  // not of their medians, and trimming keeps one preempted sample from
  // setting the mean (docs/partitioning.md, "Measurement").
  double trimmed_mean_seconds = 0;
  double p10_seconds = 0;
  double p90_seconds = 0;
  double min_seconds = 0;
  double max_seconds = 0;
  // Number of samples (each may cover a batch of calls).
  int samples = 0;
  // Seconds per call of every sample, in the order taken.
  std::vector<double> sample_seconds;
};

// Times `run` under the protocol. With `before_each`, it is called, untimed,
// before every call of `run` (warm-ups included), and calls are never
// batched: each sample is one call in the state `before_each` leaves (the
// caches a plan leaves, cost/cache_state.h). Its time counts against the
// budget, which bounds how long timing takes.
TimingResult time_function(const std::function<void()>& run, const TimingOptions& options = {},
                           const std::function<void()>& before_each = {});

// Seconds from `start` to now on the steady clock.
double seconds_since(std::chrono::steady_clock::time_point start);

// Summary statistics of samples (seconds); p in [0, 1], nearest-rank on the sorted samples.
double percentile(std::vector<double> samples, double p);
// The mean of `samples` without the slowest tenth (TimingResult::trimmed_mean_seconds).
double trimmed_mean(std::vector<double> samples);
TimingResult summarize(std::vector<double> samples);

}  // namespace collage
