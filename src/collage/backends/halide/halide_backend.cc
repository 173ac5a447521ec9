// The halide backend: a fusing compiler. Any connected region of the ops
// it supports (op_support.h) becomes one Halide pipeline, scheduled
// (schedule.h), compiled ahead of time for this CPU into a shared library
// that the kernel cache keeps on disk (kernel_cache.h), and run on the
// plan's OpenMP threads (halide_kernel.h).
#include "collage/backends/halide/halide_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "code_version.h"
#include "collage/backends/compiles_ahead.h"
#include "collage/backends/halide/halide_kernel.h"
#include "collage/backends/halide/kernel_cache.h"
#include "collage/backends/halide/lowering.h"
#include "collage/backends/halide/op_support.h"
#include "collage/backends/halide/schedule.h"
#include "collage/ir/error.h"
#include "collage/ir/structural_hash.h"

// The build reads the package's version; the library does not report it.
#ifndef COLLAGE_HALIDE_VERSION
#define COLLAGE_HALIDE_VERSION "unknown"
#endif

namespace collage {
namespace {

// The longest one region may take to compile and link.
double compile_budget_seconds() {
  if (const char* text = std::getenv("COLLAGE_HALIDE_COMPILE_BUDGET")) {
    char* end = nullptr;
    const double seconds = std::strtod(text, &end);
    if (end != text && *end == '\0' && seconds > 0) return seconds;
    throw Error(fmt::format(
        "COLLAGE_HALIDE_COMPILE_BUDGET must be a positive number of seconds, not '{}'", text));
  }
  return 30.0;
}

class HalideBackend final : public Backend, public CompilesAhead {
 public:
  explicit HalideBackend(halide::ScheduleKind schedule) : schedule_(schedule) {}

  std::string name() const override { return "halide"; }
  std::string version() const override {
    return fmt::format("Halide {} ({} schedule)", COLLAGE_HALIDE_VERSION,
                       halide::schedule_name(schedule_));
  }
  std::string code_version() const override { return COLLAGE_CODE_VERSION; }
  BackendStyle style() const override { return BackendStyle::kCompiler; }

  bool supports(const Graph& graph, const Node& node) const override {
    return halide::supports_node(graph, node);
  }

  std::string report_color() const override { return "#f9c74f"; }
  std::string describe_support() const override {
    return fmt::format(
        "float32 regions fused into one generated kernel for {} ({} schedule; compiled "
        "kernels cached in {}): {}",
        halide::kernel_target().to_string(), halide::schedule_name(schedule_),
        halide::default_kernel_cache_dir(), halide::describe_ops());
  }

  Result<std::unique_ptr<Kernel>> compile(const Graph& partition,
                                          const CompileOptions& options) const override {
    if (partition.num_nodes() == 0) return Failure{"the partition has no nodes"};
    Result<halide::Lowered> lowered = halide::lower(partition);
    if (!lowered) return Failure{lowered.error()};
    const int threads = std::max(1, options.threads);
    try {
      const halide::KernelCache cache(halide::default_kernel_cache_dir());
      Result<halide::KernelLibrary> library =
          cache.load_or_build(kernel_key(partition, threads), object_writer(*lowered, threads),
                              compile_budget_seconds());
      if (!library) return Failure{library.error()};
      return halide::make_halide_kernel(partition, std::move(*library), lowered->param_values,
                                        threads);
    } catch (const Error& error) {
      return Failure{error.what()};
    }
  }

  using CompilesAhead::prepare;
  std::size_t prepare(const std::vector<Graph>& partitions, const CompileOptions& options,
                      const Progress& progress) const override {
    const int threads = std::max(1, options.threads);
    const halide::KernelCache cache(halide::default_kernel_cache_dir());
    // Partitions with nothing to build count as done at once.
    std::size_t done = 0;
    auto one_done = [&] {
      ++done;
      if (progress) progress(done, partitions.size());
    };
    halide::ParallelBuilds builds(
        cache, compile_budget_seconds(),
        static_cast<int>(std::max(1U, std::thread::hardware_concurrency())), one_done);
    for (const Graph& partition : partitions) {
      // Lowered here and dropped once its child has started: the child
      // schedules and compiles its own copy.
      Result<halide::Lowered> lowered = partition.num_nodes() == 0
                                            ? Result<halide::Lowered>(Failure{"empty"})
                                            : halide::lower(partition);
      if (!lowered ||
          !builds.add(kernel_key(partition, threads), object_writer(*lowered, threads))) {
        one_done();
      }
    }
    builds.wait_all();
    return static_cast<std::size_t>(builds.built());
  }

 private:
  // The template's loops do not depend on the thread count beyond "more
  // than one"; the autoschedulers' do.
  int schedule_threads(int threads) const {
    return schedule_ == halide::ScheduleKind::kTemplate ? std::min(threads, 2) : threads;
  }

  // What names one compiled kernel: the region, the target, the schedule
  // and the code that made it.
  std::string kernel_key(const Graph& partition, int threads) const {
    return fmt::format("region {} | target {} | schedule {} threads {} | {} | code {}",
                       structural_hash_hex(partition), halide::kernel_target().to_string(),
                       halide::schedule_name(schedule_), schedule_threads(threads), version(),
                       code_version());
  }

  // Schedules `lowered` and writes its object file (in the build's child).
  halide::ObjectWriter object_writer(const halide::Lowered& lowered, int threads) const {
    return [this, &lowered, threads](const std::string& object_path) -> Result<bool> {
      const Halide::Target target = halide::kernel_target();
      Result<Halide::Pipeline> pipeline =
          halide::schedule(lowered, schedule_, target, schedule_threads(threads));
      if (!pipeline) return Failure{pipeline.error()};
      std::vector<Halide::Argument> arguments;
      for (const Halide::ImageParam& param : lowered.params) arguments.emplace_back(param);
      try {
        pipeline->compile_to_object(object_path, arguments, halide::kKernelFunction, target);
      } catch (const Halide::Error& error) {
        return Failure{fmt::format("Halide could not compile the region: {}", error.what())};
      }
      return true;
    };
  }

  halide::ScheduleKind schedule_;
};

}  // namespace

std::unique_ptr<Backend> make_halide_backend() {
  return make_halide_backend(halide::schedule_from_environment());
}

std::unique_ptr<Backend> make_halide_backend(halide::ScheduleKind schedule) {
  return std::make_unique<HalideBackend>(schedule);
}

}  // namespace collage
