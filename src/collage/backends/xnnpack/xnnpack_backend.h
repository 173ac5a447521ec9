// The XNNPACK backend: a graph runtime over XNNPACK's subgraph API.
//
// Graph style: any connected region of supported float32 nodes (convolutions,
// pooling, fully connected layers, elementwise math, softmax, reshapes, ...)
// compiles into one XNNPACK subgraph and one runtime, with 4-D values
// channels-last inside. The kernel converts the partition's NCHW inputs and
// outputs at its edges, so measured times include those transposes. The
// runtime runs on a pthreadpool of CompileOptions::threads threads.
#pragma once

#include <memory>

#include "collage/backends/backend.h"

namespace collage {

std::unique_ptr<Backend> make_xnnpack_backend();

}  // namespace collage
