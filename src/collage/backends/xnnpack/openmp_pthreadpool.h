// OpenMP pthreadpool: XNNPACK's thread pool, run on the OpenMP threads that
// every other backend uses.
//
// XNNPACK takes its threads through the pthreadpool C API (an opaque
// pthreadpool_t and a dozen parallelize_* calls). Debian's libpthreadpool
// starts a pool of its own, so a plan that alternates XNNPACK partitions
// with native, oneDNN or OpenBLAS ones (all on libgomp) keeps two sets of
// workers on the same cores: each hand-off wakes a sleeping pool and the
// idle pool's spinning workers take cores from the busy one. On a 2-core
// machine that cost more than the kernels themselves (docs/threading.md).
//
// This file implements the pthreadpool API that XNNPACK calls over OpenMP
// parallel loops, so there is one pool of threads for the whole process.
// The definitions live in the executable (or the library that links this
// backend), which the dynamic linker searches before libpthreadpool, so
// libXNNPACK's calls bind to them; openmp_pool_parallel_calls() lets a test
// check that they did.
#pragma once

#include <cstdint>

namespace collage::xnnpack {

// How many pthreadpool_parallelize_* calls ran on more than one OpenMP
// thread in this process.
std::uint64_t openmp_pool_parallel_calls();

}  // namespace collage::xnnpack
