#include "resource_options.h"

#include <fmt/format.h>

#include "collage/ir/error.h"
#include "collage/runtime/memory_budget.h"
#include "planning.h"

namespace collage::cli {

int max_threads() { return 4 * default_threads(); }

int checked_threads(int threads) {
  if (threads >= 1 && threads <= max_threads()) return threads;
  throw Error(fmt::format("{} is out of range: must be between 1 and {} (4 per core)", threads,
                          max_threads()),
              {.field = "--threads"});
}

CLI::Option* add_threads_option(CLI::App* cmd, int& threads) {
  threads = default_threads();
  return cmd->add_option("--threads", threads, "threads for every backend (default: all cores)")
      ->capture_default_str();
}

void add_max_memory_option(CLI::App* cmd, std::string& text) {
  cmd->add_option("--max-memory", text,
                  fmt::format("refuse a model whose tensors need more than this many bytes "
                              "(K, M, G suffixes; default: 3/4 of physical memory, {})",
                              format_bytes(default_memory_budget())));
}

void check_max_memory(const Graph& graph, const std::string& max_memory) {
  const std::int64_t budget =
      max_memory.empty() ? default_memory_budget() : parse_byte_count(max_memory, "--max-memory");
  check_memory_budget(graph, budget, "--max-memory");
}

}  // namespace collage::cli
