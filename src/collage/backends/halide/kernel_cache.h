// The on-disk cache of compiled Halide kernels.
//
// A region is compiled once per machine: Halide emits an object file, the
// system's C compiler driver links it into a shared library, and the library
// is stored under a file name derived from the kernel's key (the region's
// structural hash, the target, the schedule, Halide's version and this
// backend's code version). Next to each library a small text file records
// the whole key, the library's size and a checksum of its bytes; a library
// whose record is missing, names another key, or does not match its bytes
// (a stale or corrupt entry) is rebuilt, never loaded. `collage run --plan`
// therefore loads every kernel it was tuned with without compiling.
//
// Compiling runs in a child process under a time budget, so a compile that
// hangs or crashes costs that candidate only.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "collage/ir/result.h"

namespace collage::halide {

// The directory: $COLLAGE_HALIDE_CACHE, else `halide-kernels` beside the
// measurement cache (~/.cache/collage/halide-kernels).
std::string default_kernel_cache_dir();

// A loaded kernel library and its entry point.
struct KernelLibrary {
  std::shared_ptr<void> handle;
  // The pipeline's `_argv` entry: a pointer per argument.
  int (*entry)(void** arguments) = nullptr;
  // Where it came from, for tests and reports.
  bool from_cache = false;
  double compile_seconds = 0.0;
};

// How the library is produced on a miss: writes an object file to the given
// path, or returns a Failure. Runs in the child process.
using ObjectWriter = std::function<Result<bool>(const std::string& object_path)>;

class KernelCache {
 public:
  explicit KernelCache(std::string directory);

  // The library for `key`, from disk when a valid entry exists, else
  // compiled with `write_object` (within `budget_seconds`), linked, stored
  // and loaded.
  Result<KernelLibrary> load_or_build(const std::string& key, const ObjectWriter& write_object,
                                      double budget_seconds) const;

  // The library file for `key` (it may not exist).
  std::string library_path(const std::string& key) const;
  std::string record_path(const std::string& key) const;
  // Whether a valid library for `key` is stored (its record matches it).
  bool holds(const std::string& key) const;

 private:
  friend class ParallelBuilds;
  // Where one build of `key` writes before its library is stored.
  struct Paths {
    std::string object;
    std::string library;
  };
  Paths build_paths(const std::string& key) const;
  // Stores what a build produced at `paths` under `key` (cleans up after a
  // failed build and returns its failure).
  Result<bool> store(const std::string& key, const Paths& paths, const Result<bool>& built) const;
  // True when the library stored for `key` matches its record, else why not.
  Result<bool> check_stored(const std::string& key) const;
  Result<KernelLibrary> load(const std::string& key) const;

  std::string directory_;
};

// Builds several kernels at once, each in its own child process under the
// budget, into `cache`: a tune compiles its candidates' kernels ahead, as
// many at a time as there are cores, before they are measured one by one
// (compiling is single-threaded; measuring needs the machine to itself).
// A build that fails is not recorded: compile() builds it again and
// reports why. Destruction waits for the builds still running.
class ParallelBuilds {
 public:
  // `on_done` (optional) hears of each build that ends, stored or not.
  ParallelBuilds(const KernelCache& cache, double budget_seconds, int parallel,
                 std::function<void()> on_done = {});
  ~ParallelBuilds();
  ParallelBuilds(const ParallelBuilds&) = delete;
  ParallelBuilds& operator=(const ParallelBuilds&) = delete;

  // Starts building `key` with `write_object` (run in the child) unless it
  // is stored or was added before; first waits while `parallel` builds run.
  // False when it starts nothing (stored, added before, or the child could
  // not start).
  bool add(const std::string& key, const ObjectWriter& write_object);
  void wait_all();
  // Builds finished and stored so far.
  int built() const { return built_; }

 private:
  struct Running;
  // Collects the builds that are done; with `wait_for_one`, waits until one is.
  void reap(bool wait_for_one);

  const KernelCache& cache_;
  double budget_seconds_;
  int parallel_;
  std::vector<Running> running_;
  std::set<std::string> started_;
  int built_ = 0;
  std::function<void()> on_done_;
};

// The name of the entry the lowering emits ("collage_kernel"), and its
// argv wrapper's.
inline constexpr const char* kKernelFunction = "collage_kernel";

}  // namespace collage::halide
