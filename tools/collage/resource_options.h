// Options that bound what a command may take from the machine: --threads and
// --max-memory. One definition and one validator each, shared by `run`,
// `tune`, `compare` and the worker, so that a value refused by one command is
// refused by all with the same message.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "collage/ir/graph.h"

namespace collage::cli {

// The highest --threads accepted: 4 threads per core. More only adds
// contention, and an unchecked value (10000) would spawn that many threads
// per pool.
int max_threads();

// Throws Error (field --threads) unless 1 <= threads <= max_threads().
int checked_threads(int threads);

// Adds --threads (default: every core) to `cmd`.
CLI::Option* add_threads_option(CLI::App* cmd, int& threads);

// Adds --max-memory to `cmd` (empty `text`: the default budget).
void add_max_memory_option(CLI::App* cmd, std::string& text);

// Throws Error (field --max-memory) when the model's tensors need more than
// the budget --max-memory gives (see runtime/memory_budget.h).
void check_max_memory(const Graph& graph, const std::string& max_memory);

}  // namespace collage::cli
