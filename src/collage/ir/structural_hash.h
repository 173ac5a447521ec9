// Structural hash: a fingerprint of what a graph computes, not of what its
// parts are called.
//
// It keys the persistent measurement cache: the same sub-graph extracted from
// two models (or twice from one) must hit the same cache entry, on any
// machine and in any run. So the hash ignores graph, node and value names and
// the values of weights (a Conv costs the same whatever its weights are), but
// covers everything that changes cost or results: op types, domains,
// attributes, element types, shapes, the wiring, which values are inputs and
// outputs and in which order, the opsets, and the values of small constants
// (a Reshape's shape vector, a Pow's exponent). It is computed with a fixed
// 64-bit function (FNV-1a) over a byte encoding that does not depend on
// pointers, hash seeds or the host's byte order.
//
// Nodes are visited in a canonical topological order (ties between ready
// nodes broken by a name-free digest of everything upstream of them), so two
// graphs that differ only in how independent branches were interleaved hash
// alike.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "collage/ir/graph.h"

namespace collage {

// Constants with at most this many elements contribute their values.
inline constexpr std::int64_t kHashedConstantElements = 64;

std::uint64_t structural_hash(const Graph& graph);

// FNV-1a, 64 bit, of `bytes`: the same function, for names, keys and files.
std::uint64_t fnv1a_64(std::string_view bytes);

// The hash as 16 lower-case hex digits.
std::string structural_hash_hex(const Graph& graph);

}  // namespace collage
