#include "collage/runtime/interleaved_timing.h"

#include <chrono>

#include "collage/runtime/timing.h"

namespace collage {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

std::vector<TimingResult> time_interleaved(const std::vector<std::function<void()>>& variants,
                                           int rounds, int warmup, int settle,
                                           double settle_seconds) {
  for (int i = 0; i < warmup; ++i) {
    for (const auto& run : variants) run();
  }
  std::vector<std::vector<double>> samples(variants.size());
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t v = 0; v < variants.size(); ++v) {
      const auto settle_start = Clock::now();
      for (int i = 0; i < settle || seconds_since(settle_start) < settle_seconds; ++i) {
        variants[v]();
      }
      const auto start = Clock::now();
      variants[v]();
      samples[v].push_back(seconds_since(start));
    }
  }
  std::vector<TimingResult> results;
  for (auto& s : samples) results.push_back(summarize(std::move(s)));
  return results;
}

}  // namespace collage
