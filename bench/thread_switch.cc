// thread_switch: what alternating between an OpenMP pool (libgomp: native,
// oneDNN, OpenBLAS) and XNNPACK's pthreadpool costs, per wait policy.
//
// A plan runs partitions back to back, so an XNNPACK runtime often starts
// while libgomp's workers are still spinning after the previous partition,
// and the other way round. On a machine with as many cores as threads, a
// spinning idle worker takes a core from the pool that has work. This
// program times an XNNPACK convolution and an OpenMP loop of similar length,
// each alone and strictly alternating, at the same thread count, and
// reports the alternation's overhead. libgomp reads OMP_WAIT_POLICY and
// GOMP_SPINCOUNT once, when it loads, so the program runs itself once per
// setting in a child process and prints one table. XNNPACK's side is varied
// in-process: runtimes with and without XNN_FLAG_YIELD_WORKERS (which sends
// pthreadpool's workers to sleep after the last operator instead of
// spinning).
//
// Usage: bench_thread_switch [threads=2] [repetitions=400]
#include <omp.h>
#include <pthreadpool.h>
#include <xnnpack.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// One 3x3 convolution, NHWC, as a one-node XNNPACK runtime.
class XnnpackConv {
 public:
  XnnpackConv(std::size_t channels, std::size_t size, pthreadpool_t pool, std::uint32_t flags)
      : input_(channels * size * size + XNN_EXTRA_BYTES),
        output_(channels * size * size),
        filter_(channels * 9 * channels),
        bias_(channels) {
    std::mt19937 engine(7);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (float& v : input_) v = uniform(engine);
    for (float& v : filter_) v = uniform(engine) * 0.1f;
    xnn_subgraph_t subgraph = nullptr;
    check(xnn_create_subgraph(2, 0, &subgraph));
    const std::size_t io_dims[4] = {1, size, size, channels};
    const std::size_t filter_dims[4] = {channels, 3, 3, channels};
    const std::size_t bias_dims[1] = {channels};
    std::uint32_t in = 0, out = 1, filter = 0, bias = 0;
    check(xnn_define_tensor_value(subgraph, xnn_datatype_fp32, 4, io_dims, nullptr, 0,
                                  XNN_VALUE_FLAG_EXTERNAL_INPUT, &in));
    check(xnn_define_tensor_value(subgraph, xnn_datatype_fp32, 4, io_dims, nullptr, 1,
                                  XNN_VALUE_FLAG_EXTERNAL_OUTPUT, &out));
    check(xnn_define_tensor_value(subgraph, xnn_datatype_fp32, 4, filter_dims, filter_.data(),
                                  XNN_INVALID_VALUE_ID, 0, &filter));
    check(xnn_define_tensor_value(subgraph, xnn_datatype_fp32, 1, bias_dims, bias_.data(),
                                  XNN_INVALID_VALUE_ID, 0, &bias));
    check(xnn_define_convolution_2d(subgraph, 1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, channels, channels,
                                    -INFINITY, INFINITY, in, filter, bias, out, 0));
    check(xnn_create_runtime_v2(subgraph, pool, flags, &runtime_));
    xnn_delete_subgraph(subgraph);
    const xnn_external_value externals[2] = {{0, input_.data()}, {1, output_.data()}};
    check(xnn_setup_runtime(runtime_, 2, externals));
  }
  ~XnnpackConv() { xnn_delete_runtime(runtime_); }

  void run() { check(xnn_invoke_runtime(runtime_)); }

 private:
  static void check(xnn_status status) {
    if (status == xnn_status_success) return;
    std::fprintf(stderr, "XNNPACK call failed with status %d\n", static_cast<int>(status));
    std::exit(1);
  }

  std::vector<float> input_, output_, filter_, bias_;
  xnn_runtime_t runtime_ = nullptr;
};

// A compute-bound OpenMP loop (a small dense layer per row), sized to take
// about as long as the convolution.
class OpenMpLoop {
 public:
  OpenMpLoop(int rows, int threads)
      : rows_(rows), threads_(threads), x_(rows * 64), w_(64 * 64), y_(rows * 64) {
    std::mt19937 engine(3);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (float& v : x_) v = uniform(engine);
    for (float& v : w_) v = uniform(engine);
  }

  void run() {
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (int r = 0; r < rows_; ++r) {
      for (int o = 0; o < 64; ++o) {
        float sum = 0.0f;
        for (int i = 0; i < 64; ++i) sum += x_[r * 64 + i] * w_[o * 64 + i];
        y_[r * 64 + o] = sum;
      }
    }
  }

 private:
  int rows_;
  int threads_;
  std::vector<float> x_, w_, y_;
};

double time_once(const std::function<void()>& f) {
  auto start = Clock::now();
  f();
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// Median microseconds of `a` and `b` alone and when strictly alternating.
struct Timings {
  double a_alone, b_alone, a_alternating, b_alternating;
  double overhead() const { return (a_alternating + b_alternating) / (a_alone + b_alone) - 1.0; }
};

// The three phases run in interleaved rounds, so that load from other
// processes, which changes over seconds, weighs on all of them alike.
Timings measure(const std::function<void()>& a, const std::function<void()>& b, int repetitions) {
  std::vector<double> ta, tb, ta_alt, tb_alt;
  for (int i = 0; i < 20; ++i) {
    a();
    b();
  }
  constexpr int kPerRound = 10;
  for (int round = 0; round < repetitions / kPerRound; ++round) {
    for (int i = 0; i < kPerRound; ++i) ta.push_back(time_once(a));
    for (int i = 0; i < kPerRound; ++i) tb.push_back(time_once(b));
    for (int i = 0; i < kPerRound; ++i) {
      ta_alt.push_back(time_once(a));
      tb_alt.push_back(time_once(b));
    }
  }
  return {median(ta), median(tb), median(ta_alt), median(tb_alt)};
}

// Child: one line per (size, XNNPACK flag) under this process's OpenMP setting.
int run_child(int threads, int repetitions) {
  if (xnn_initialize(nullptr) != xnn_status_success) return 1;
  pthreadpool_t pool = pthreadpool_create(static_cast<std::size_t>(threads));
  struct Size {
    const char* name;
    std::size_t channels, pixels;
    int rows;
  };
  // Row counts give OpenMP loops about as long as the convolutions at 2 threads.
  const Size sizes[] = {{"small", 16, 14, 400}, {"medium", 32, 28, 2400}};
  for (const Size& size : sizes) {
    OpenMpLoop loop(size.rows, threads);
    for (std::uint32_t flags : {0u, static_cast<std::uint32_t>(XNN_FLAG_YIELD_WORKERS)}) {
      XnnpackConv conv(size.channels, size.pixels, pool, flags);
      Timings t = measure([&] { conv.run(); }, [&] { loop.run(); }, repetitions);
      std::printf("%s %s %.1f %.1f %.1f %.1f %.1f\n", size.name, flags ? "yield" : "spin",
                  t.a_alone, t.b_alone, t.a_alternating, t.b_alternating, 100.0 * t.overhead());
    }
  }
  pthreadpool_destroy(pool);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--child") == 0) {
    return run_child(std::atoi(argv[2]), std::atoi(argv[3]));
  }
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int repetitions = argc > 2 ? std::atoi(argv[2]) : 400;
  const char* settings[] = {
      "",
      "OMP_WAIT_POLICY=passive",
      "OMP_WAIT_POLICY=active",
      "GOMP_SPINCOUNT=10000",
      "GOMP_SPINCOUNT=1000",
  };
  std::printf("threads=%d repetitions=%d; median microseconds per call\n", threads, repetitions);
  std::printf("%-26s %-6s %-7s %9s %9s %9s %9s %9s\n", "OpenMP setting", "size", "xnnpack", "xnn",
              "omp", "xnn-alt", "omp-alt", "overhead");
  for (const char* setting : settings) {
    std::string command = std::string("env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT ") + setting + " " +
                          argv[0] + " --child " + std::to_string(threads) + " " +
                          std::to_string(repetitions);
    FILE* child = popen(command.c_str(), "r");
    if (child == nullptr) return 1;
    char size[16], mode[16];
    double a, b, a_alt, b_alt, overhead;
    while (std::fscanf(child, "%15s %15s %lf %lf %lf %lf %lf", size, mode, &a, &b, &a_alt, &b_alt,
                       &overhead) == 7) {
      std::printf("%-26s %-6s %-7s %9.1f %9.1f %9.1f %9.1f %8.1f%%\n",
                  *setting ? setting : "(default)", size, mode, a, b, a_alt, b_alt, overhead);
    }
    if (pclose(child) != 0) return 1;
  }
  return 0;
}
