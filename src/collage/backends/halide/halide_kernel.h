// HalideKernel: a compiled region loaded from its shared library, run on
// the plan's OpenMP threads.
//
// The library carries its own copy of the Halide runtime, whose thread pool
// would be a third set of threads beside OpenMP's (native, oneDNN, OpenBLAS,
// XNNPACK). Instead its parallel loops are handed to OpenMP: the kernel
// installs a `halide_do_par_for` that runs the loop's tasks in an OpenMP
// parallel loop, with the thread count carried in the kernel's user
// context. Halide's error messages are captured the same way and thrown as
// Error.
#pragma once

#include <memory>

#include "collage/backends/halide/kernel_cache.h"
#include "collage/ir/graph.h"
#include "collage/runtime/kernel.h"

namespace collage::halide {

// A kernel over `library` for `partition`, whose lowering passed the values
// `param_values` (inputs, then buffer constants) before the outputs.
std::unique_ptr<Kernel> make_halide_kernel(const Graph& partition, KernelLibrary library,
                                           const std::vector<ValueId>& param_values, int threads);

}  // namespace collage::halide
