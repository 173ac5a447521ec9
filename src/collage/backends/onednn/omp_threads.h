// ScopedOmpThreads: run a region with a given OpenMP thread count.
//
// This oneDNN build uses the OpenMP runtime, which reads the calling
// thread's nthreads setting when a primitive is created (to pick blockings)
// and when it executes. Every backend of a run must use the same number of
// threads, and the caller's own setting is restored afterwards so that
// backends sharing the OpenMP runtime do not leak settings into each other.
#pragma once

#include <omp.h>

namespace collage::onednn {

class ScopedOmpThreads {
 public:
  // threads <= 0 means all cores.
  explicit ScopedOmpThreads(int threads) : previous_(omp_get_max_threads()) {
    omp_set_num_threads(threads > 0 ? threads : omp_get_num_procs());
  }
  ~ScopedOmpThreads() { omp_set_num_threads(previous_); }
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

 private:
  int previous_;
};

}  // namespace collage::onednn
