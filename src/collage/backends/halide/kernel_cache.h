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
#include <string>

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

 private:
  Result<KernelLibrary> load(const std::string& key) const;

  std::string directory_;
};

// The name of the entry the lowering emits ("collage_kernel"), and its
// argv wrapper's.
inline constexpr const char* kKernelFunction = "collage_kernel";

}  // namespace collage::halide
