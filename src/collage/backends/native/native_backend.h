// The native backend: the project's own kernels for every supported op.
//
// It is the reference for correctness (every other backend is checked
// against it), the fallback of every strategy (it runs every supported op, so
// the search never dead-ends), and a fusing compiler of its own: chains of
// elementwise and broadcast ops become one loop.
#pragma once

#include <memory>

#include "collage/backends/backend.h"
#include "collage/ir/evaluator.h"

namespace collage {

std::unique_ptr<Backend> make_native_backend();

// The native kernels as an OpEvaluator, for constant folding.
const OpEvaluator& native_evaluator();

// The reference executor: a kernel that runs `graph` node by node with the
// native kernels, without fusion. Throws Error naming every unsupported op.
std::unique_ptr<Kernel> compile_reference(const Graph& graph, int threads);

}  // namespace collage
