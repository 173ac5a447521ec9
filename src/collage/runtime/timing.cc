#include "collage/runtime/timing.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <numeric>

namespace collage {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double percentile(std::vector<double> samples, double p) {
  assert(!samples.empty() && "percentile of no samples");
  std::sort(samples.begin(), samples.end());
  double rank = p * static_cast<double>(samples.size() - 1);
  auto lower = static_cast<std::size_t>(std::floor(rank));
  auto upper = static_cast<std::size_t>(std::ceil(rank));
  double fraction = rank - static_cast<double>(lower);
  return samples[lower] * (1 - fraction) + samples[upper] * fraction;
}

double trimmed_mean(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const std::size_t dropped = samples.size() < 5 ? 0 : (samples.size() + 9) / 10;
  const std::size_t kept = samples.size() - dropped;
  const auto end = samples.begin() + static_cast<std::ptrdiff_t>(kept);
  return std::accumulate(samples.begin(), end, 0.0) / static_cast<double>(kept);
}

TimingResult summarize(std::vector<double> samples) {
  TimingResult result;
  if (samples.empty()) return result;
  result.median_seconds = percentile(samples, 0.5);
  result.trimmed_mean_seconds = trimmed_mean(samples);
  result.p10_seconds = percentile(samples, 0.1);
  result.p90_seconds = percentile(samples, 0.9);
  result.min_seconds = *std::min_element(samples.begin(), samples.end());
  result.max_seconds = *std::max_element(samples.begin(), samples.end());
  result.samples = static_cast<int>(samples.size());
  result.sample_seconds = std::move(samples);
  return result;
}

TimingResult time_function(const std::function<void()>& run, const TimingOptions& options,
                           const std::function<void()>& before_each) {
  // Warm-up, which also tells how long one call takes.
  auto warmup_start = Clock::now();
  int warmups = 0;
  while (warmups < options.warmup_runs || seconds_since(warmup_start) < options.warmup_seconds) {
    if (before_each) before_each();
    run();
    ++warmups;
  }
  double per_call = seconds_since(warmup_start) / warmups;
  int batch = 1;
  if (!before_each && per_call > 0 && per_call < options.min_sample_seconds) {
    batch = static_cast<int>(std::ceil(options.min_sample_seconds / per_call));
  }

  std::vector<double> samples;
  std::vector<double> medians;
  auto sampling_start = Clock::now();
  while (static_cast<int>(samples.size()) < options.max_samples) {
    if (before_each) before_each();
    auto start = Clock::now();
    for (int i = 0; i < batch; ++i) run();
    samples.push_back(seconds_since(start) / batch);
    if (static_cast<int>(samples.size()) < options.min_samples) continue;
    if (seconds_since(sampling_start) > options.budget_seconds) break;
    medians.push_back(percentile(samples, 0.5));
    // Stable: the median moved less than the fraction over the last 3 checks.
    if (medians.size() >= 3) {
      double newest = medians.back();
      double oldest = medians[medians.size() - 3];
      if (std::abs(newest - oldest) <= options.stable_fraction * newest) break;
    }
  }
  return summarize(std::move(samples));
}

}  // namespace collage
