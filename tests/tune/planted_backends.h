// Planted backends: test-only backends that fail on purpose.
//
// Tuning runs a backend on sub-graphs it may never have seen, and a real
// library can fail there in four ways: its kernel crashes the process, its
// kernel never returns, it computes the wrong numbers, or its compile step
// throws. Each planted backend claims a few elementwise ops (so the
// partitioner offers it candidates) and fails in exactly one of those ways,
// which lets the tests check that every failure costs one candidate and
// never the tuning run. The planted worker (planted_worker.cc) serves
// measurements for them in a separate process, as `collage worker` does for
// the real backends.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "collage/backends/backend.h"

namespace collage::testing {

enum class Fault {
  // The kernel raises SIGSEGV when it runs.
  kCrash,
  // The kernel sleeps for an hour when it runs.
  kHang,
  // The kernel returns the native result plus one.
  kWrongNumbers,
  // compile() throws instead of returning a Failure.
  kThrowOnCompile,
};

// "crashing", "hanging", "wrong", "throwing".
std::string fault_backend_name(Fault fault);

// A library-style backend called fault_backend_name(fault) that claims the
// nodes whose op type is in `ops`.
std::unique_ptr<Backend> make_planted_backend(Fault fault,
                                              std::set<std::string> ops = {"Relu", "Add", "Mul"});

// The native backend and one planted backend of each fault, by name.
class PlantedBackends {
 public:
  PlantedBackends();

  const Backend& native() const { return *native_; }
  const Backend& planted(Fault fault) const;
  // nullptr for a name that is neither native nor planted.
  const Backend* find(const std::string& name) const;

 private:
  std::unique_ptr<Backend> native_;
  std::vector<std::unique_ptr<Backend>> planted_;
};

}  // namespace collage::testing
