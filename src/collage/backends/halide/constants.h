// Constants: the values of a region that a kernel compiles in.
//
// Integer constants (shapes, axes, paddings, steps) and scalar float
// constants (Clip bounds, a Pad's fill) are read at compile time, not passed
// as buffers; the support check and the lowering read them the same way.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "collage/ir/graph.h"

namespace collage::halide {

// The constant behind `id`; nullptr when `id` is absent or computed.
const Tensor* constant_of(const Graph& graph, ValueId id);

// The values of an int32 or int64 constant; nullopt for anything else.
std::optional<std::vector<std::int64_t>> constant_ints(const Graph& graph, ValueId id);

// The value of a one-element constant, as a float; nullopt for anything else.
std::optional<float> constant_scalar(const Graph& graph, ValueId id);

// `axis` counted from the front of a rank-`rank` shape (negative counts from the back).
int normalized_axis(std::int64_t axis, int rank);

}  // namespace collage::halide
