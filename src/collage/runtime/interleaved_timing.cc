#include "collage/runtime/interleaved_timing.h"

#include <chrono>

namespace collage {

std::vector<TimingResult> time_interleaved(const std::vector<std::function<void()>>& variants,
                                           int rounds, int warmup, int settle) {
  for (int i = 0; i < warmup; ++i) {
    for (const auto& run : variants) run();
  }
  std::vector<std::vector<double>> samples(variants.size());
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t v = 0; v < variants.size(); ++v) {
      for (int i = 0; i < settle; ++i) variants[v]();
      auto start = std::chrono::steady_clock::now();
      variants[v]();
      samples[v].push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  std::vector<TimingResult> results;
  for (auto& s : samples) results.push_back(summarize(std::move(s)));
  return results;
}

}  // namespace collage
