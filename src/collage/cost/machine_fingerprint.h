// MachineFingerprint: what makes a timing on this machine comparable to another.
//
// A measured cost is only reusable on the same kind of processor with the
// same instruction-set extensions and the same thread count, so the
// fingerprint goes into every measurement-cache key. It is deliberately
// coarse (no host name, no clock speed): two identical cloud machines share
// their caches.
#pragma once

#include <string>

namespace collage {

struct MachineFingerprint {
  std::string cpu_model;
  // The SIMD-relevant ISA flags, sorted and joined ("avx,avx2,fma,...").
  std::string isa_flags;
  int threads = 1;

  // Reads /proc/cpuinfo (best effort: unknown fields stay empty).
  static MachineFingerprint current(int threads);

  // "AMD EPYC|avx,avx2,fma|t2": stable text for cache keys and plans.
  std::string to_string() const;
};

}  // namespace collage
