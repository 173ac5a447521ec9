#include "model_loading.h"

#include <fmt/format.h>

#include "collage/backends/native/native_backend.h"
#include "collage/backends/registry.h"
#include "collage/ir/error.h"
#include "collage/onnx/importer.h"

namespace collage::cli {

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

Graph load_model(const std::string& path, const std::map<std::string, Shape>& input_shapes,
                 GraphOptLevel level, CanonicalizeStats* stats) {
  ImportOptions options;
  options.input_shapes = input_shapes;
  options.evaluator = &native_evaluator();
  options.graph_opt = level;
  options.canonicalize_stats = stats;
  return import_onnx(path, options);
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

GraphOptLevel graph_opt_level(const std::string& text) {
  std::optional<GraphOptLevel> level = parse_graph_opt_level(text);
  if (!level)
    throw Error(fmt::format("'{}' is not none, basic or all", text), {.field = "--graph-opt"});
  return *level;
}

std::map<std::string, int> unsupported_ops(const Graph& graph, const Backend& backend) {
  std::map<std::string, int> counts;
  for (const Node& node : graph.nodes()) {
    if (backend.supports(graph, node)) continue;
    ++counts[node.domain.empty() ? node.op_type : node.domain + "." + node.op_type];
  }
  return counts;
}

std::string describe_op_counts(const std::map<std::string, int>& counts) {
  std::vector<std::string> parts;
  for (const auto& [op, count] : counts) {
    parts.push_back(count == 1 ? op : fmt::format("{} (x{})", op, count));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

void require_native_support(const Graph& graph, const std::string& path) {
  std::map<std::string, int> missing =
      unsupported_ops(graph, BackendRegistry::global().get("native"));
  if (missing.empty()) return;
  int nodes = 0;
  for (const auto& [op, count] : missing) nodes += count;
  throw Error(fmt::format("the native backend cannot run {} node{}: {}", nodes,
                          nodes == 1 ? "" : "s", describe_op_counts(missing)),
              {.file = path});
}

}  // namespace collage::cli
