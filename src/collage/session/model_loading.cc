#include "collage/session/model_loading.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "collage/backends/native/native_backend.h"
#include "collage/backends/registry.h"
#include "collage/ir/control_flow.h"
#include "collage/ir/error.h"
#include "collage/onnx/importer.h"
#include "collage/session/resources.h"

namespace collage {
namespace {

ImportOptions import_options(const std::map<std::string, Shape>& input_shapes, GraphOptLevel level,
                             CanonicalizeStats* stats,
                             const std::map<std::string, Shape>& data_shapes) {
  ImportOptions options;
  options.input_shapes = input_shapes;
  options.data_shapes = data_shapes;
  options.evaluator = &native_evaluator();
  options.graph_opt = level;
  options.canonicalize_stats = stats;
  return options;
}

}  // namespace

Graph load_model(const std::string& path, const std::map<std::string, Shape>& input_shapes,
                 GraphOptLevel level, CanonicalizeStats* stats,
                 const std::map<std::string, Shape>& data_shapes) {
  return import_onnx(path, import_options(input_shapes, level, stats, data_shapes));
}

Graph load_model_bytes(const std::string& bytes, const std::map<std::string, Shape>& input_shapes,
                       GraphOptLevel level, const std::map<std::string, Shape>& data_shapes) {
  return import_onnx_model(parse_onnx_model(bytes),
                           import_options(input_shapes, level, nullptr, data_shapes), ".");
}

std::optional<std::string> open_dims_warning(const Graph& graph) {
  if (graph.open_dims.empty()) return std::nullopt;
  std::vector<std::string> dims;
  std::vector<std::string> flags;
  for (const OpenDim& dim : graph.open_dims) {
    dims.push_back(fmt::format("{} dimension {}{}", quote_untrusted(dim.input), dim.axis,
                               dim.param.empty() ? "" : " (" + quote_untrusted(dim.param) + ")"));
    const Shape& shape = graph.type(*graph.find_value(dim.input)).shape;
    const std::string flag = fmt::format("--input-shape {}={}", dim.input, fmt::join(shape, ","));
    if (std::find(flags.begin(), flags.end(), flag) == flags.end()) flags.push_back(flag);
  }
  return escape_control(fmt::format("dynamic input dimension{} set to {}: {}; other sizes: {}",
                                    dims.size() == 1 ? "" : "s", kOpenDimSize,
                                    fmt::join(dims, ", "), fmt::join(flags, " ")));
}

Error with_open_dims_hint(const Error& error, const Graph& graph) {
  if (graph.open_dims.empty() || !error.where().field.empty()) return error;
  return Error(error.message() +
                   fmt::format("; the model's dynamic input dimensions were set to {} (see the "
                               "warning above): give the sizes it runs at with --input-shape",
                               kOpenDimSize),
               error.where());
}

std::map<std::string, Shape> dynamic_input_shapes(const Graph& graph) {
  std::map<std::string, Shape> shapes;
  for (const OpenDim& dim : graph.dynamic_dims)
    shapes.emplace(dim.input, graph.type(*graph.find_value(dim.input)).shape);
  return shapes;
}

std::optional<std::string> pin_open_dims(const Graph& graph,
                                         std::map<std::string, Shape>& input_shapes) {
  for (const OpenDim& dim : graph.open_dims) {
    input_shapes.emplace(dim.input, graph.type(*graph.find_value(dim.input)).shape);
  }
  return open_dims_warning(graph);
}

GraphOptLevel graph_opt_level(const std::string& text) {
  std::optional<GraphOptLevel> level = parse_graph_opt_level(text);
  if (!level) {
    throw Error(fmt::format("{} is not none, basic or all", quote_untrusted(text)),
                {.field = "--graph-opt"});
  }
  return *level;
}

std::map<std::string, int> unsupported_ops(const Graph& graph, const Backend& backend) {
  return unsupported_op_counts(graph, [&backend](const Graph& holder, const Node& node) {
    return backend.supports(holder, node);
  });
}

std::string describe_op_counts(const std::map<std::string, int>& counts) {
  std::vector<std::string> parts;
  for (const auto& [op, count] : counts) {
    parts.push_back(count == 1 ? op : fmt::format("{} (x{})", op, count));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

void require_native_support(const Graph& graph, const std::string& path) {
  std::map<std::string, int> missing = unsupported_ops(graph, BackendRegistry::global().native());
  if (missing.empty()) return;
  int nodes = 0;
  for (const auto& [op, count] : missing) nodes += count;
  throw Error(fmt::format("the native backend cannot run {} node{}: {}", nodes,
                          nodes == 1 ? "" : "s", describe_op_counts(missing)),
              {.file = path});
}

Graph load_runnable_model(const std::string& path, const std::map<std::string, Shape>& input_shapes,
                          GraphOptLevel level, const std::string& max_memory) {
  Graph graph = load_model(path, input_shapes, level);
  require_native_support(graph, path);
  check_max_memory(graph, max_memory);
  return graph;
}

}  // namespace collage
