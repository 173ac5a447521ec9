// `collage info MODEL`: what a model is, after import and canonicalization.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli_flags.h"
#include "collage/backends/registry.h"
#include "collage/ir/control_flow.h"
#include "collage/ir/error.h"
#include "collage/ir/flops.h"
#include "collage/ir/runtime_shapes.h"
#include "collage/session/model_loading.h"
#include "commands.h"

namespace collage::cli {
namespace {

struct InfoArgs {
  std::string model;
  std::vector<std::string> input_shapes;
  std::string graph_opt = "all";
  bool nodes = false;
};

// 11689512 -> "11,689,512"
std::string with_thousands(std::int64_t number) {
  std::string digits = std::to_string(number);
  std::string out;
  int since_comma = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (since_comma == 3 && *it != '-') {
      out.push_back(',');
      since_comma = 0;
    }
    out.push_back(*it);
    ++since_comma;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

// A value's type, with the model's name (or "?") for each dimension it left
// open: f32[batch,3,224,224].
std::string declared_type(const Graph& graph, ValueId id) {
  const TensorType& type = graph.type(id);
  std::vector<std::string> dims;
  for (std::int64_t dim : type.shape)
    dims.push_back(type.at_run_time && dim == 0 ? "?" : std::to_string(dim));
  for (const OpenDim& open : graph.open_dims) {
    if (open.input != graph.value(id).name) continue;
    dims[static_cast<std::size_t>(open.axis)] = open.param.empty() ? "?" : open.param;
  }
  return fmt::format("{}[{}]", dtype_name(type.dtype), fmt::join(dims, ","));
}

void print_values(const Graph& graph, const std::vector<ValueId>& ids) {
  std::size_t width = 0;
  for (ValueId id : ids) width = std::max(width, graph.value(id).name.size());
  for (ValueId id : ids) {
    fmt::print("  {:<{}}  {}\n", graph.value(id).name, width,
               escape_control(declared_type(graph, id)));
  }
}

// The op table: each op with its count after optimization, and before when
// the optimizations changed it.
void print_operators(const std::map<std::string, int>& before,
                     const std::map<std::string, int>& after) {
  std::map<std::string, std::pair<int, int>> rows;
  int total_before = 0;
  int total_after = 0;
  for (const auto& [op, count] : before) {
    rows[op].first = count;
    total_before += count;
  }
  for (const auto& [op, count] : after) {
    rows[op].second = count;
    total_after += count;
  }
  fmt::print("operators: {} nodes, {} kinds", total_after, after.size());
  if (total_before != total_after)
    fmt::print(" ({} nodes before graph optimization)", total_before);
  fmt::print("\n");
  std::size_t width = 0;
  for (const auto& [op, counts] : rows) width = std::max(width, op.size());
  for (const auto& [op, counts] : rows) {
    const auto [was, now] = counts;
    if (was == now) {
      fmt::print("  {:<{}}  {}\n", op, width, now);
    } else {
      fmt::print("  {:<{}}  {}  (was {})\n", op, width, now, was);
    }
  }
}

// What control-flow nodes run inside their bodies (nested bodies included),
// and what runtime-shaped regions hold.
void print_bodies(const Graph& graph) {
  int graphs = 0;
  int nodes = 0;
  std::map<std::string, int> ops;
  for (const Node& node : graph.nodes()) {
    if (is_runtime_shaped_region(node)) {
      const Graph& body = *bodies(node).front();
      std::vector<std::string> parts;
      for (const auto& [op, count] : op_histogram(body))
        parts.push_back(fmt::format("{} {}", op, count));
      fmt::print(
          "shapes known only when the model runs: {} nodes, run natively as region '{}': "
          "{}\n",
          body.num_nodes(), escape_control(node.name), fmt::join(parts, ", "));
      continue;
    }
    for (const Graph* body : bodies(node)) {
      for_each_body_node(*body, [&](const Graph&, const Node& inner) {
        ++nodes;
        ++ops[inner.domain.empty() ? inner.op_type : inner.domain + "." + inner.op_type];
        graphs += static_cast<int>(bodies(inner).size());
      });
      ++graphs;
    }
  }
  if (graphs == 0) return;
  std::vector<std::string> parts;
  for (const auto& [op, count] : ops) parts.push_back(fmt::format("{} {}", op, count));
  fmt::print("in control-flow bodies: {} graphs, {} nodes: {}\n", graphs, nodes,
             fmt::join(parts, ", "));
}

void run_info(const InfoArgs& args) {
  CanonicalizeStats stats;
  Graph graph = load_model(args.model, parse_input_shapes(args.input_shapes),
                           graph_opt_level(args.graph_opt), &stats);

  fmt::print("model: {}\n", args.model);
  const bool converted = graph.source_opset != 0 && graph.source_opset != graph.opset;
  fmt::print("opset: {}{}\n", converted ? graph.source_opset : graph.opset,
             converted ? fmt::format(" (converted to {})", graph.opset) : "");
  fmt::print("graph optimization: {}\n", args.graph_opt);
  fmt::print("inputs:\n");
  print_values(graph, graph.inputs());
  fmt::print("outputs:\n");
  print_values(graph, graph.outputs());
  if (!graph.open_dims.empty()) {
    // Shapes below, parameter counts aside, are at the size import chose.
    fmt::print("open dimensions: counted as {} below (--input-shape fixes them)\n", kOpenDimSize);
  }

  print_operators(stats.ops_before_optimization, op_histogram(graph));
  print_bodies(graph);
  if (stats.rewrites.empty()) {
    fmt::print("rewrites: none\n");
  } else {
    fmt::print("rewrites:\n");
    std::size_t width = 0;
    for (const auto& [name, count] : stats.rewrites) width = std::max(width, name.size());
    for (const auto& [name, count] : stats.rewrites) {
      fmt::print("  {:<{}}  {}\n", name, width, count);
    }
  }

  fmt::print("parameters: {}\n", with_thousands(parameter_count(graph)));
  fmt::print("GFLOPs: {:.3f}\n", static_cast<double>(graph_flops(graph)) * 1e-9);

  std::map<std::string, int> missing = unsupported_ops(graph, BackendRegistry::global().native());
  fmt::print("unsupported by native: {}\n", missing.empty() ? "none" : describe_op_counts(missing));

  if (args.nodes) {
    // The names --place and --avoid select, in execution order.
    fmt::print("nodes:\n");
    for (const Node& node : graph.nodes()) {
      fmt::print("  {}  {}{}  {}\n", escape_control(node.name),
                 node.domain.empty() ? "" : escape_control(node.domain) + ".",
                 escape_control(node.op_type),
                 node.outputs.empty() ? "" : graph.type(node.outputs.front()).to_string());
    }
  }
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd =
      app.add_subcommand("info", "Show a model's inputs, outputs, operators, parameters and FLOPs");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  add_input_shape_flag(*cmd, args->input_shapes);
  add_graph_opt_flag(*cmd, args->graph_opt);
  cmd->add_flag("--nodes", args->nodes,
                "also list every node of the canonical graph: its name (what --place and "
                "--avoid select), op type and first output");
  cmd->callback([args] { run_info(*args); });
}

}  // namespace collage::cli
