// Resources: what a tuning or running session may take from the machine.
//
// One definition and one validator each for the thread count and the memory
// bound, shared by every front end (the command line, the C++ API, the
// Python module), so that a value refused by one is refused by all with the
// same message.
#pragma once

#include <cstdint>
#include <string>

#include "collage/ir/graph.h"

namespace collage {

// Default thread count: every core.
int default_threads();

// The highest thread count accepted: 4 threads per core. More only adds
// contention, and an unchecked value (10000) would spawn that many threads
// per pool.
int max_threads();

// Throws Error (field --threads) unless 1 <= threads <= max_threads().
int checked_threads(int threads);

// Throws Error (field --max-memory) when the model's tensors need more than
// the budget `max_memory` gives ("" is the default: 3/4 of physical memory;
// K, M, G suffixes; see runtime/memory_budget.h).
void check_max_memory(const Graph& graph, const std::string& max_memory);

}  // namespace collage
