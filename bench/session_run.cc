// bench_session_run MODEL INPUT_NAME INPUT.npy RUNS [THREADS]
//
// Times collage::Session::run (the native strategy) one call at a time and
// prints the median and the 10th/90th percentiles in microseconds, as one
// line: "cpp median_us p10_us p90_us". bench/binding_overhead.sh runs it
// beside the same loop in Python to measure what the binding adds per call.
#include <collage/collage.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s MODEL INPUT_NAME INPUT.npy RUNS [THREADS]\n", argv[0]);
    return 2;
  }
  try {
    int threads = argc > 5 ? std::stoi(argv[5]) : 1;
    collage::Session session(argv[1], {.threads = threads});
    std::map<std::string, collage::Array> inputs = {{argv[2], collage::load_npy(argv[3])}};
    const int runs = std::stoi(argv[4]);
    for (int i = 0; i < runs / 10 + 1; ++i) session.run(inputs);
    std::vector<double> micros;
    micros.reserve(static_cast<std::size_t>(runs));
    for (int i = 0; i < runs; ++i) {
      auto start = std::chrono::steady_clock::now();
      session.run(inputs);
      micros.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
              .count());
    }
    std::sort(micros.begin(), micros.end());
    auto at = [&](double q) { return micros[static_cast<std::size_t>(q * (micros.size() - 1))]; };
    std::printf("cpp %.3f %.3f %.3f\n", at(0.5), at(0.1), at(0.9));
  } catch (const collage::Error& e) {
    std::fprintf(stderr, "bench_session_run: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
