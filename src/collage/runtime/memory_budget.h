// MemoryBudget: the memory a model's values need, checked before running.
//
// A model can ask for tensors far larger than the machine: Tile, Expand,
// ConstantOfShape, Range, Resize or Pad to billions of elements, or an
// --input-shape with huge dimensions. Allocating them as the executor meets
// them ends in an out-of-memory error that names nothing, or in the kernel's
// OOM killer. Every shape is static after import, so the bytes are known
// beforehand: the sum of every value's size (inputs, weights, every
// intermediate and output) is an upper bound of what running the model holds
// at once (the executor frees values it no longer needs, and fused
// partitions never materialize their inner values), and a model over the
// budget is refused with the largest tensors named.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collage/ir/graph.h"

namespace collage {

struct MemoryEstimate {
  // Sum of the byte sizes of every value of the graph; saturates at INT64_MAX.
  std::int64_t total_bytes = 0;
  // The values, largest first.
  std::vector<ValueId> by_size;
};

MemoryEstimate estimate_memory(const Graph& graph);

// The machine's physical memory in bytes (sysconf), or 0 when unknown.
std::int64_t physical_memory_bytes();

// The default budget: three quarters of physical memory, leaving room for the
// program itself, the backends' scratch buffers and the rest of the system.
// INT64_MAX when physical memory is unknown.
std::int64_t default_memory_budget();

// Throws Error (field `flag`) when the graph's values need more than
// `budget_bytes`, naming the total and the three largest values.
void check_memory_budget(const Graph& graph, std::int64_t budget_bytes, const std::string& flag);

// "1.5 GiB", "512 KiB", "17 B".
std::string format_bytes(std::int64_t bytes);

// Parses a byte count: a number with an optional unit K, M, G or T (powers of
// 1024; "KiB", "KB" and "k" are read alike). Throws Error (field `flag`) for
// anything else, zero, or a count that overflows int64.
std::int64_t parse_byte_count(const std::string& text, const std::string& flag);

}  // namespace collage
