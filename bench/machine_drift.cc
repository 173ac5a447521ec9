// How this machine's speed drifts, and whether a reference workload could
// correct measurements for it.
//
// A plan's estimate sums measurements made minutes to days apart, on a
// machine whose speed moves. One remedy would store with each measurement
// the time of a fixed reference workload timed beside it, and scale every
// measurement by the reference's time now over its time then. That works
// as far as the reference slows down with the kernels. This program times,
// cycle after cycle for SECONDS, two reference workloads and three kernels
// of different kinds, and prints the median of each per WINDOW seconds,
// then how far the window medians spread (largest over smallest) for each
// kernel alone and for each kernel over each reference. A reference that
// tracks the drift makes the second spread smaller than the first.
//
// The references: a 64x64 matrix product and a pass over 2 MiB, once on
// each of THREADS OpenMP threads and once on one thread (median of 9 and
// of 21 runs). The kernels: a 256x256 MatMul on oneDNN where it is built
// (else native): arithmetic; an Add over 3.2 M floats (native): memory
// traffic; a Sigmoid over 200 K floats (native): elementwise arithmetic;
// each the median of 9 runs.
//
// Usage: bench_machine_drift [threads=2] [seconds=540] [window=30]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "collage/backends/registry.h"
#include "collage/runtime/random_inputs.h"
#include "collage/runtime/timing.h"

namespace collage {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median_of_runs(const std::function<void()>& run, int runs) {
  std::vector<double> seconds;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    run();
    seconds.push_back(seconds_since(start));
  }
  return percentile(seconds, 0.5);
}

// The reference workload of one thread.
struct Reference {
  static constexpr int kMatrix = 64;
  std::vector<float> a = std::vector<float>(kMatrix * kMatrix, 0.5f);
  std::vector<float> b = std::vector<float>(kMatrix * kMatrix, 0.25f);
  std::vector<float> c = std::vector<float>(kMatrix * kMatrix, 0.0f);
  std::vector<float> stream = std::vector<float>(512 * 1024, 1.0f);

  void run() {
    std::fill(c.begin(), c.end(), 0.0f);
    for (int i = 0; i < kMatrix; ++i) {
      for (int k = 0; k < kMatrix; ++k) {
        const float aik = a[i * kMatrix + k];
        for (int j = 0; j < kMatrix; ++j) c[i * kMatrix + j] += aik * b[k * kMatrix + j];
      }
    }
    const float scale = c[0] * 1e-6f;
    for (float& x : stream) x = x * 0.5f + scale;
  }
};

Graph one_op(const std::string& op, const std::vector<TensorType>& inputs, const TensorType& out) {
  Graph g;
  std::vector<ValueId> ids;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    ids.push_back(g.add_input(fmt::format("x{}", i), inputs[i]));
  }
  ValueId y = g.add_value("y", out);
  g.add_node(op, ids, {y}, {}, "op");
  g.add_output(y);
  return g;
}

struct Series {
  std::string label;
  std::function<double()> time;
  std::vector<double> samples;
};

int run(int threads, double seconds, double window) {
  const BackendRegistry& registry = BackendRegistry::global();
  const Backend& arithmetic =
      registry.find("onednn") ? *registry.find("onednn") : registry.native();
  const TensorType square{DType::kFloat32, {256, 256}};
  const TensorType large{DType::kFloat32, {64, 224, 224}};
  const TensorType small{DType::kFloat32, {64, 56, 56}};
  struct Case {
    std::string label;
    const Backend* backend;
    Graph graph;
  };
  std::vector<Case> cases;
  cases.push_back({fmt::format("MatMul 256x256 ({})", arithmetic.name()), &arithmetic,
                   one_op("MatMul", {square, square}, square)});
  cases.push_back(
      {"Add 3.2M floats (native)", &registry.native(), one_op("Add", {large, large}, large)});
  cases.push_back(
      {"Sigmoid 200K floats (native)", &registry.native(), one_op("Sigmoid", {small}, small)});

  std::vector<Reference> references(static_cast<std::size_t>(threads));
  std::vector<Series> series;
  series.push_back({fmt::format("reference, {} threads", threads),
                    [&] {
                      auto once = [&] {
#pragma omp parallel for num_threads(threads) schedule(static, 1)
                        for (int t = 0; t < threads; ++t)
                          references[static_cast<std::size_t>(t)].run();
                      };
                      once();
                      once();
                      return median_of_runs(once, 9);
                    },
                    {}});
  series.push_back({"reference, 1 thread",
                    [&] {
                      auto once = [&] { references[0].run(); };
                      once();
                      once();
                      return median_of_runs(once, 21);
                    },
                    {}});
  const std::size_t references_count = series.size();
  std::vector<std::unique_ptr<Kernel>> kernels;
  std::vector<std::vector<Tensor>> inputs(cases.size());
  std::vector<std::vector<Tensor>> outputs(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    auto kernel = cases[i].backend->compile(cases[i].graph, CompileOptions{threads});
    if (!kernel) {
      fmt::print(stderr, "{}: {}\n", cases[i].label, kernel.error());
      return 1;
    }
    kernels.push_back(std::move(*kernel));
    std::map<std::string, Tensor> named = random_inputs(cases[i].graph);
    for (ValueId id : cases[i].graph.inputs()) {
      inputs[i].push_back(named.at(cases[i].graph.value(id).name));
    }
    for (ValueId id : cases[i].graph.outputs()) {
      outputs[i].push_back(Tensor::allocate(cases[i].graph.type(id)));
    }
    series.push_back({cases[i].label,
                      [&, i] {
                        auto once = [&, i] { kernels[i]->run(inputs[i], outputs[i]); };
                        once();
                        return median_of_runs(once, 9);
                      },
                      {}});
  }

  std::vector<int> window_of;
  const auto start = Clock::now();
  while (seconds_since(start) < seconds) {
    window_of.push_back(static_cast<int>(seconds_since(start) / window));
    for (Series& s : series) s.samples.push_back(s.time());
  }
  const int windows = window_of.back() + 1;
  // medians[s][w]: the median of series s over window w.
  std::vector<std::vector<double>> medians(series.size());
  for (std::size_t s = 0; s < series.size(); ++s) {
    for (int w = 0; w < windows; ++w) {
      std::vector<double> in_window;
      for (std::size_t c = 0; c < window_of.size(); ++c) {
        if (window_of[c] == w) in_window.push_back(series[s].samples[c]);
      }
      medians[s].push_back(percentile(in_window, 0.5));
    }
  }

  fmt::print("{} cycles over {:.0f} s, {} thread{}; medians (ms) per {:.0f} s window\n\n",
             window_of.size(), seconds, threads, threads == 1 ? "" : "s", window);
  fmt::print("| window |");
  for (const Series& s : series) fmt::print(" {} |", s.label);
  fmt::print("\n|---:|");
  for (std::size_t s = 0; s < series.size(); ++s) fmt::print("---:|");
  fmt::print("\n");
  for (int w = 0; w < windows; ++w) {
    fmt::print("| {:.0f} s |", w * window);
    for (std::size_t s = 0; s < series.size(); ++s) fmt::print(" {:.3f} |", medians[s][w] * 1e3);
    fmt::print("\n");
  }
  auto range = [](const std::vector<double>& v) {
    return *std::max_element(v.begin(), v.end()) / *std::min_element(v.begin(), v.end());
  };
  fmt::print("\nlargest / smallest window median: the kernel alone, and over each reference\n\n");
  fmt::print("| kernel | alone |");
  for (std::size_t r = 0; r < references_count; ++r) fmt::print(" over {} |", series[r].label);
  fmt::print("\n|---|---:|");
  for (std::size_t r = 0; r < references_count; ++r) fmt::print("---:|");
  fmt::print("\n");
  for (std::size_t s = references_count; s < series.size(); ++s) {
    fmt::print("| {} | {:.3f} |", series[s].label, range(medians[s]));
    for (std::size_t r = 0; r < references_count; ++r) {
      std::vector<double> ratio;
      for (int w = 0; w < windows; ++w) ratio.push_back(medians[s][w] / medians[r][w]);
      fmt::print(" {:.3f} |", range(ratio));
    }
    fmt::print("\n");
  }
  return 0;
}

}  // namespace
}  // namespace collage

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 540;
  const double window = argc > 3 ? std::atof(argv[3]) : 30;
  return collage::run(std::max(threads, 1), std::max(seconds, 1.0), std::max(window, 1.0));
}
