#include "collage/session/resources.h"

#include <fmt/format.h>

#include <thread>

#include "collage/ir/error.h"
#include "collage/ir/runtime_shapes.h"
#include "collage/runtime/memory_budget.h"

namespace collage {

int default_threads() {
  unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(cores);
}

int max_threads() { return 4 * default_threads(); }

int checked_threads(int threads) {
  if (threads >= 1 && threads <= max_threads()) return threads;
  throw Error(fmt::format("{} is out of range: must be between 1 and {} (4 per core)", threads,
                          max_threads()),
              {.field = "--threads"});
}

void check_max_memory(const Graph& graph, const std::string& max_memory) {
  const std::int64_t budget =
      max_memory.empty() ? default_memory_budget() : parse_byte_count(max_memory, "--max-memory");
  check_memory_budget(graph, budget, "--max-memory");
  // Sizes a runtime-shaped region learns as it runs are held to it too.
  set_runtime_memory_budget(budget);
}

}  // namespace collage
