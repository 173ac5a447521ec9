// RuntimeKernel: an XNNPACK runtime behind the Kernel contract.
//
// The kernel owns the runtime made from a BuiltSubgraph, the static data the
// runtime reads, and staging buffers for the partition's edges. XNNPACK may
// read XNN_EXTRA_BYTES past an input's end: an input already in the order
// XNNPACK keeps it, in a buffer with room past its end
// (Tensor::readable_past_end, every buffer the executor allocates), is read
// in place; the others are copied into staging buffers that have the room
// (transposing NCHW to NHWC where the input is stored channels-last, and
// flipping a shifted uint8's sign bits). Then it invokes the runtime and
// writes the outputs back in NCHW order. Plain outputs are written by
// XNNPACK in place.
// An edge the caller stores channels-last (CompileOptions) is handed over
// as NHWC: no conversion when XNNPACK keeps that value channels-last too,
// and a channels-last output is then written by XNNPACK in place.
// Kernels with the same thread count share one pthreadpool handle, whose
// work runs on the OpenMP threads that the other backends use too
// (openmp_pthreadpool.h): one set of threads for the whole plan.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "collage/backends/backend.h"
#include "collage/backends/xnnpack/subgraph_builder.h"
#include "collage/ir/result.h"
#include "collage/runtime/kernel.h"

namespace collage::xnnpack {

// Whether XNNPACK initialized on this machine (done once, on first call);
// nullopt when it did, the reason otherwise.
std::optional<std::string> initialize_xnnpack();

// A Kernel running `built` on options.threads threads, with its edges in
// options' layouts; a Failure when XNNPACK cannot create the runtime (an
// operator it rejects at creation) or a layout is not for a 4-D edge.
Result<std::unique_ptr<Kernel>> make_runtime_kernel(BuiltSubgraph built,
                                                    const CompileOptions& options);

// The conversion a kernel does at a plain edge of a 4-D tensor of `type`
// (float32, or 8-bit with a uint8's sign bits flipped on the way) that it
// computes channels-last: NCHW to NHWC (or, with `to_plain`, back) over the
// pool the kernels of `threads` threads share.
std::unique_ptr<LayoutConversion> make_edge_conversion(const TensorType& type, bool to_plain,
                                                       int threads);

}  // namespace collage::xnnpack
