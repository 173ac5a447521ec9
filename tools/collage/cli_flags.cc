#include "cli_flags.h"

#include <fmt/format.h>

#include "collage/ir/error.h"
#include "collage/onnx/importer.h"
#include "collage/runtime/memory_budget.h"
#include "collage/session/resources.h"

namespace collage::cli {

void add_input_shape_flag(CLI::App& command, std::vector<std::string>& flags) {
  command.add_option("--input-shape", flags, "fix an input's shape: NAME=D0,D1,... (repeatable)")
      ->allow_extra_args(false);
}

std::map<std::string, Shape> parse_input_shapes(const std::vector<std::string>& flags) {
  std::map<std::string, Shape> shapes;
  for (const std::string& flag : flags) {
    std::pair<std::string, Shape> parsed;
    try {
      parsed = parse_input_shape(flag);
    } catch (const Error& e) {
      if (!e.where().field.empty()) throw;
      throw Error(e.message(), {.field = "--input-shape " + quote_untrusted(flag)});
    }
    if (!shapes.emplace(parsed.first, parsed.second).second) {
      throw Error(fmt::format("input '{}' is given twice", parsed.first),
                  {.field = "--input-shape"});
    }
  }
  return shapes;
}

CLI::Option* add_graph_opt_flag(CLI::App& command, std::string& level) {
  return command
      .add_option("--graph-opt", level,
                  "Graph optimizations before partitioning: none, basic (remove redundant work, "
                  "fold scales into weights) or all (also fuse LayerNorm, Gelu, Swish, "
                  "HardSwish chains into one op each)")
      ->check(CLI::IsMember({"none", "basic", "all"}))
      ->capture_default_str();
}

CLI::Option* add_threads_flag(CLI::App& command, int& threads) {
  threads = default_threads();
  return command.add_option("--threads", threads, "threads for every backend (default: all cores)")
      ->capture_default_str();
}

void add_max_memory_flag(CLI::App& command, std::string& text) {
  command.add_option("--max-memory", text,
                     fmt::format("refuse a model whose tensors need more than this many bytes "
                                 "(K, M, G suffixes; default: 3/4 of physical memory, {})",
                                 format_bytes(default_memory_budget())));
}

void add_search_flags(CLI::App& command, SearchSettings& settings) {
  command
      .add_option("--refine-rounds", settings.refine_rounds,
                  "rounds of: profile the plan in context, charge each backend's observed "
                  "per-partition overhead, search again (0: search once)")
      ->capture_default_str();
  command
      .add_option("--budget", settings.budget_seconds,
                  "seconds after which refinement starts no new round (measuring the "
                  "candidates is not counted)")
      ->capture_default_str();
  command
      .add_option("--max-depth", settings.max_depth,
                  "longest path inside a graph-runtime or fusing-compiler candidate")
      ->capture_default_str();
  command
      .add_option("--max-exits", settings.max_exits,
                  "most outputs of a graph-runtime or fusing-compiler candidate (library calls "
                  "always have one)")
      ->capture_default_str();
}

}  // namespace collage::cli
