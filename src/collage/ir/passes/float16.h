// Float16 models computed in float32.
//
// No backend of this build has float16 kernels for the CPUs it runs on, so a
// model whose weights and activations are float16 runs in float32 inside:
// its float16 constants become float32, the values between its nodes
// become float32, and Casts (and the other ops that name an output type in
// an attribute) that produced float16 produce float32. Its interface keeps
// the model's types: a float16 graph input is cast to float32 where it
// enters, a float16 graph output is cast back where it leaves (round to
// nearest even), so callers feed and get float16 as the model declares.
//
// The result differs from a model computed in float16 throughout by the
// rounding float16 would add after every op: it is the more accurate.
#pragma once

#include "collage/ir/graph.h"

namespace collage {

// Rewrites `graph` as described above; the new Casts' outputs are typed,
// and every other float16 value but the interface becomes float32. Returns
// how many values and attributes changed: 0 when the graph holds no
// float16.
int compute_float16_in_float32(Graph& graph);

}  // namespace collage
