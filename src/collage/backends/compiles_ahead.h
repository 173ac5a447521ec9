// CompilesAhead: a backend whose compile() is slow and cached can also
// compile ahead, several kernels at a time.
//
// A code generator (the halide backend) spends seconds per kernel in its
// compiler, single-threaded, and keeps what it compiled on disk. Measuring
// needs the machine to itself, but compiling does not, so a tune first has
// such a backend compile every candidate it will measure on all cores, and
// then measures them one by one from the kernel cache; compile_plan does
// the same for a plan's partitions.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "collage/backends/backend.h"

namespace collage {

class CompilesAhead {
 public:
  virtual ~CompilesAhead() = default;
  // Hears how many of the partitions are done (compiled, found compiled,
  // or failed) of how many, as each is.
  using Progress = std::function<void(std::size_t done, std::size_t total)>;

  // Compiles ahead what compile() will be asked for `partitions` with
  // `options`. A failure is left for compile() to report. Returns how many
  // kernels it compiled (those already cached are not counted).
  std::size_t prepare(const std::vector<Graph>& partitions, const CompileOptions& options) const {
    return prepare(partitions, options, Progress());
  }
  virtual std::size_t prepare(const std::vector<Graph>& partitions, const CompileOptions& options,
                              const Progress& progress) const = 0;
};

// `backend` as one that compiles ahead, or null.
inline const CompilesAhead* compiles_ahead(const Backend& backend) {
  return dynamic_cast<const CompilesAhead*>(&backend);
}

}  // namespace collage
