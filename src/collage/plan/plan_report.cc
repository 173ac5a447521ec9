#include "collage/plan/plan_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "collage/backends/registry.h"
#include "collage/ir/control_flow.h"
#include "collage/ir/error.h"
#include "collage/ir/runtime_shapes.h"
#include "collage/search/placement.h"

namespace collage {
namespace {

// "Conv+Relu" for short partitions, "Conv x20, Relu x16, +3 more" for long ones.
std::string describe_ops(const std::vector<std::string>& ops) {
  if (ops.size() <= 4) return fmt::format("{}", fmt::join(ops, "+"));
  std::map<std::string, int> counts;
  for (const std::string& op : ops) ++counts[op];
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [op, n] : counts) sorted.emplace_back(-n, op);
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < sorted.size() && i < 3; ++i) {
    parts.push_back(fmt::format("{} x{}", sorted[i].second, -sorted[i].first));
  }
  if (sorted.size() > 3) parts.push_back(fmt::format("+{} more", sorted.size() - 3));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// Whether a partition computes on 8-bit values: it holds a quantized op.
bool runs_int8(const PlanPartition& partition) {
  static const std::set<std::string> quantized = {"QLinearConv",
                                                  "QLinearConvTranspose",
                                                  "QLinearMatMul",
                                                  "ConvInteger",
                                                  "MatMulInteger",
                                                  "QLinearAdd",
                                                  "QLinearMul",
                                                  "QLinearSigmoid",
                                                  "QLinearSoftmax",
                                                  "QLinearLeakyRelu",
                                                  "QLinearHardSwish",
                                                  "QLinearHardSigmoid",
                                                  "QLinearConcat",
                                                  "QLinearAveragePool",
                                                  "QLinearGlobalAveragePool",
                                                  "QGemm"};
  return std::any_of(partition.ops.begin(), partition.ops.end(),
                     [](const std::string& op) { return quantized.count(op) != 0; });
}

std::string dot_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// The ops of `graph`, as describe_ops() puts them.
std::string graph_ops(const Graph& graph) {
  std::vector<std::string> ops;
  for (const Node& node : graph.nodes()) ops.push_back(node.op_type);
  return ops.empty() ? "no ops" : describe_ops(ops);
}

// The plan of body `index` of `node` among `plan`'s bodies (`plan` may be
// null); null when that body has none.
const Plan* body_plan(const Plan* plan, const Node& node, std::size_t index) {
  if (plan == nullptr) return nullptr;
  for (const PlanBody& body : plan->bodies) {
    if (body.node == node.name && body.index == index) return &body.plan;
  }
  return nullptr;
}

// The lines under a partition that say what the bodies of its nodes hold
// (control flow, a runtime-shaped region) and how the bodies with a plan
// (among `plan`'s bodies, `plan` partitioning the graph that holds `node`)
// are partitioned; nested bodies indented further.
void append_bodies_text(const Node& node, const Plan* plan, int depth, std::string& text) {
  const std::vector<const Graph*> node_bodies = bodies(node);
  const std::vector<std::string> names = body_names(node);
  for (std::size_t b = 0; b < node_bodies.size(); ++b) {
    const Graph* body = node_bodies[b];
    const std::string& name = names[b];
    const Plan* planned = body_plan(plan, node, b);
    text += fmt::format(
        "{:{}}{} of {} {}: {} node{}: {}{}\n", "", 5 + 2 * depth, name, node.op_type,
        shorten(node.name, 40), body->num_nodes(), body->num_nodes() == 1 ? "" : "s",
        shorten(graph_ops(*body), 60),
        planned ? fmt::format("; planned: {} (est {} ms)", planned->partitions_per_backend_text(),
                              ms_column(planned->estimated_ms))
                : "");
    for (const Node& inner : body->nodes()) append_bodies_text(inner, planned, depth + 1, text);
  }
}

// Node name -> the backend of the partition of `plan` that holds it.
std::unordered_map<std::string, std::string> backend_of_nodes(const Plan& plan) {
  std::unordered_map<std::string, std::string> backends;
  for (const PlanPartition& p : plan.partitions) {
    for (const std::string& name : p.nodes) backends.emplace(name, p.backend);
  }
  return backends;
}

// One node box of the drawing.
std::string dot_node(const std::string& indent, const std::string& id, const Node& node,
                     const std::string& color) {
  return fmt::format("{}{} [label=\"{}\", fillcolor=\"{}\", tooltip=\"{}\"];\n", indent, id,
                     node.op_type, color, dot_escape(node.name));
}

// An edge from each node of `graph` to each node that reads one of its
// outputs, the nodes named `prefix` and their index.
void append_edges(const Graph& graph, const std::string& prefix, const std::string& indent,
                  std::string& dot) {
  const auto users = graph.consumers();
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    for (ValueId v : graph.node(static_cast<NodeId>(n)).outputs) {
      for (NodeId user : users[static_cast<std::size_t>(v)]) {
        dot += fmt::format("{}{}{} -> {}{};\n", indent, prefix, n, prefix, user);
      }
    }
  }
}

// Draws a node that holds bodies as a cluster around the node itself (the
// end of the edges that reach it) and one cluster per body, its nodes and
// edges inside, nested bodies the same way. `id` is the node's DOT id.
// A body with a plan (among `plan`'s bodies; `plan` may be null) colours
// each node by the backend its plan runs it on.
void append_body_clusters(const Node& node, const std::string& id, const std::string& color,
                          const Plan* plan, int depth, std::string& dot) {
  const std::string indent(static_cast<std::size_t>(4 + 2 * depth), ' ');
  dot += fmt::format("{}subgraph cluster_{} {{\n{}  style=\"dashed\"; color=\"#888888\";\n", indent,
                     id, indent);
  dot += fmt::format("{}  label=\"{} {}\";\n", indent, node.op_type, dot_escape(node.name));
  dot += dot_node(indent + "  ", id, node, color);
  const std::vector<const Graph*> node_bodies = bodies(node);
  const std::vector<std::string> names = body_names(node);
  for (std::size_t b = 0; b < node_bodies.size(); ++b) {
    const Graph* body = node_bodies[b];
    const std::string& name = names[b];
    const std::string body_id = fmt::format("{}_b{}", id, b);
    dot += fmt::format("{}  subgraph cluster_{} {{\n{}    style=\"rounded\"; color=\"#bbbbbb\";\n",
                       indent, body_id, indent);
    const Plan* planned = body_plan(plan, node, b);
    dot += fmt::format("{}    label=\"{}{}\";\n", indent, name,
                       planned ? " (planned: " + planned->partitions_per_backend_text() + ")" : "");
    const auto backends =
        planned ? backend_of_nodes(*planned) : std::unordered_map<std::string, std::string>{};
    for (std::size_t n = 0; n < body->num_nodes(); ++n) {
      const Node& inner = body->node(static_cast<NodeId>(n));
      const std::string inner_id = fmt::format("{}_{}", body_id, n);
      auto runs_on = backends.find(inner.name);
      const std::string inner_color =
          runs_on == backends.end() ? color : backend_color(runs_on->second);
      if (!bodies(inner).empty()) {
        append_body_clusters(inner, inner_id, inner_color, planned, depth + 2, dot);
      } else {
        dot += dot_node(indent + "    ", inner_id, inner, inner_color);
      }
    }
    // An empty body (a branch that hands a value on) still shows.
    if (body->num_nodes() == 0) {
      dot += fmt::format(
          "{}    {}_empty [label=\"(passes its inputs on)\", shape=plaintext, "
          "style=\"\"];\n",
          indent, body_id);
    }
    append_edges(*body, body_id + "_", indent + "    ", dot);
    dot += indent + "  }\n";
  }
  dot += indent + "}\n";
}

}  // namespace

std::string ms_column(const std::optional<double>& milliseconds) {
  return milliseconds ? fmt::format("{:.3f}", *milliseconds) : "-";
}

std::string shorten(const std::string& text, std::size_t width) {
  if (text.size() <= width) return text;
  return text.substr(0, width - 3) + "...";
}

std::string backend_color(const std::string& backend) {
  // A plan may name a backend this build lacks (made on another machine).
  const Backend* known = BackendRegistry::global().find(backend);
  return known ? known->report_color() : "#ffffff";
}

std::string int8_partitions_text(const Plan& plan) {
  std::map<std::string, int> per_backend;
  for (const PlanPartition& p : plan.partitions) {
    if (runs_int8(p)) ++per_backend[p.backend];
  }
  std::vector<std::string> parts;
  for (const auto& [backend, count] : per_backend)
    parts.push_back(fmt::format("{} {}", backend, count));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::vector<bool> pinned_partitions(const Plan& plan) {
  Placement pins;
  for (const std::string& line : plan.placement) {
    if (line.rfind("place ", 0) != 0) continue;
    try {
      pins.pin(line.substr(6));
    } catch (const Error&) {
      // A plan edited by hand: its line marks nothing.
    }
  }
  std::vector<bool> pinned;
  for (const PlanPartition& p : plan.partitions) {
    bool any = false;
    for (std::size_t i = 0; i < p.nodes.size() && !any; ++i) {
      Node node;
      node.name = p.nodes[i];
      node.op_type = i < p.ops.size() ? p.ops[i] : "";
      any = pins.pin_of(node) != nullptr;
    }
    pinned.push_back(any);
  }
  return pinned;
}

bool plan_has_bodies(const Plan& plan) {
  static const std::set<std::string> holders = {"If", "Loop", "Scan",
                                                std::string(kRuntimeShapesOp)};
  return std::any_of(plan.partitions.begin(), plan.partitions.end(), [](const PlanPartition& p) {
    return std::any_of(p.ops.begin(), p.ops.end(),
                       [](const std::string& op) { return holders.count(op) != 0; });
  });
}

std::string plan_to_text(const Plan& plan, const Graph* model) {
  std::unordered_map<std::string, const Node*> node_by_name;
  if (model != nullptr) {
    for (const Node& node : model->nodes()) node_by_name.emplace(node.name, &node);
  }
  std::string text;
  text += fmt::format("plan: {}   model: {}   threads: {}\n", plan.label(), plan.model_path,
                      plan.threads);
  if (!plan.machine.empty()) text += fmt::format("machine: {}\n", plan.machine);
  if (!plan.input_shapes.empty())
    text += fmt::format("input shapes: {}\n", shapes_to_string(plan.input_shapes));
  text += fmt::format("estimated: {} ms   measured end to end: {} ms\n",
                      ms_column(plan.estimated_ms), ms_column(plan.measured_ms));
  const bool in_context = std::any_of(plan.partitions.begin(), plan.partitions.end(),
                                      [](const PlanPartition& p) { return p.measured_ms; });
  if (!plan.placement.empty()) {
    text += "placement (the plan honours these):\n";
    for (const std::string& line : plan.placement) text += "  " + shorten(line, 100) + "\n";
  }
  const std::vector<bool> pinned = pinned_partitions(plan);
  text += fmt::format("\n{:>3}  {:<9} {:<22} {:<34} {:>9}{}  {}\n", "#", "backend", "rule", "ops",
                      "est ms", in_context ? fmt::format(" {:>9}", "ctx ms") : "",
                      "alternatives (est ms)");
  for (std::size_t i = 0; i < plan.partitions.size(); ++i) {
    const PlanPartition& p = plan.partitions[i];
    std::vector<std::string> alternatives;
    for (const PlanAlternative& a : p.alternatives) {
      alternatives.push_back(
          a.estimated_ms ? fmt::format("{}/{} {:.3f}", a.backend, a.node_count, *a.estimated_ms)
                         : fmt::format("{}/{} invalid", a.backend, a.node_count));
    }
    text += fmt::format("{:>3}  {:<9} {:<22} {:<34} {:>9}{}  {}\n", i,
                        pinned[i] ? p.backend + "*" : p.backend, shorten(p.rule, 22),
                        shorten(describe_ops(p.ops), 34), ms_column(p.estimated_ms),
                        in_context ? fmt::format(" {:>9}", ms_column(p.measured_ms)) : "",
                        fmt::join(alternatives, ", "));
    text += fmt::format("     in: {}   out: {}\n",
                        shorten(fmt::format("{}", fmt::join(p.inputs, ", ")), 50),
                        shorten(fmt::format("{}", fmt::join(p.outputs, ", ")), 50));
    for (const std::string& name : p.nodes) {
      if (auto it = node_by_name.find(name); it != node_by_name.end()) {
        append_bodies_text(*it->second, &plan, 0, text);
      }
    }
  }
  for (const PlanBody& body : plan.bodies) {
    text += fmt::format("body plan: {} of {}: {} (est {} ms)\n",
                        body.name.empty() ? fmt::format("body {}", body.index) : body.name,
                        shorten(body.node, 40), body.plan.partitions_per_backend_text(),
                        ms_column(body.plan.estimated_ms));
  }
  if (std::find(pinned.begin(), pinned.end(), true) != pinned.end()) {
    text += "     * pinned: a --place rule names a node of the partition\n";
  }
  text += "\npartitions per backend:";
  for (const auto& [backend, count] : plan.partitions_per_backend()) {
    text += fmt::format(" {} {}", backend, count);
  }
  text += "\n";
  if (const std::string int8 = int8_partitions_text(plan); !int8.empty()) {
    text += fmt::format("int8 partitions (quantized ops): {}\n", int8);
  }
  if (plan.search.candidates > 0) {
    text += fmt::format(
        "search: {} candidates, {} measured, {} cache hits, {} invalid, {} states, {:.1f} s\n",
        plan.search.candidates, plan.search.measured, plan.search.cache_hits, plan.search.invalid,
        plan.search.states_expanded, plan.search.seconds);
    if (!plan.search.layout.empty()) {
      text += fmt::format("search: measured in {}\n", plan.search.layout == "own"
                                                          ? "each backend's own layout"
                                                          : plan.search.layout);
    }
    if (plan.search.screened > 0 || plan.search.ruled_out > 0) {
      text += fmt::format(
          "search: {} screened with a short timing, {} ruled out by their bound without running\n",
          plan.search.screened, plan.search.ruled_out);
    }
    if (plan.search.routes_dropped > 0) {
      text += fmt::format(
          "search: {} routes left unexpanded by the cap on mixed-backend routes per covered set\n",
          plan.search.routes_dropped);
    }
  }
  if (plan.search.moves_tried > 0 || !plan.search.moves_start.empty()) {
    text += fmt::format("local moves: {} measured end to end, {} kept", plan.search.moves_tried,
                        plan.search.moves_kept);
    if (!plan.search.moves_start.empty()) {
      text += fmt::format(", starting from the {} cover", plan.search.moves_start);
    }
    text += "\n";
  }
  return text;
}

std::string plan_to_dot(const Plan& plan, const Graph* model) {
  std::string dot =
      "digraph plan {\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", "
      "fontname=\"Helvetica\", fontsize=10];\n";
  dot += fmt::format("  label=\"{} plan of {} (estimated {} ms)\";\n  labelloc=t;\n",
                     dot_escape(plan.strategy), dot_escape(plan.model_path),
                     ms_column(plan.estimated_ms));
  // Legend: one node per backend used.
  dot += "  subgraph cluster_legend {\n    label=\"backends\";\n";
  for (const auto& [backend, count] : plan.partitions_per_backend()) {
    dot += fmt::format("    \"legend_{0}\" [label=\"{0} ({1})\", fillcolor=\"{2}\"];\n", backend,
                       count, backend_color(backend));
  }
  dot += "  }\n";

  if (model == nullptr) {
    std::unordered_map<std::string, std::size_t> producer;
    for (std::size_t i = 0; i < plan.partitions.size(); ++i) {
      const PlanPartition& p = plan.partitions[i];
      for (const std::string& v : p.outputs) producer[v] = i;
      dot += fmt::format(
          "  p{0} [id=\"partition_{0}\", label=\"#{1} {2}\\n{3}\\n{4} ms\", fillcolor=\"{5}\"];\n",
          i, i, p.backend, dot_escape(describe_ops(p.ops)), ms_column(p.estimated_ms),
          backend_color(p.backend));
    }
    for (std::size_t i = 0; i < plan.partitions.size(); ++i) {
      for (const std::string& v : plan.partitions[i].inputs) {
        auto it = producer.find(v);
        if (it != producer.end()) dot += fmt::format("  p{} -> p{};\n", it->second, i);
      }
    }
    return dot + "}\n";
  }

  std::unordered_map<std::string, NodeId> node_by_name;
  for (std::size_t i = 0; i < model->num_nodes(); ++i) {
    node_by_name.emplace(model->node(static_cast<NodeId>(i)).name, static_cast<NodeId>(i));
  }
  const std::vector<bool> pinned = pinned_partitions(plan);
  for (std::size_t i = 0; i < plan.partitions.size(); ++i) {
    const PlanPartition& p = plan.partitions[i];
    dot += fmt::format(
        "  subgraph cluster_p{0} {{\n    id=\"partition_{0}\"; style=\"{1}\"; color=\"#555555\";\n",
        i, pinned[i] ? "rounded,bold" : "rounded");
    dot += fmt::format("    label=\"#{} {}{} {} ms\";\n", i, p.backend,
                       pinned[i] ? " (pinned)" : "", ms_column(p.estimated_ms));
    for (const std::string& name : p.nodes) {
      auto it = node_by_name.find(name);
      if (it == node_by_name.end()) continue;
      const Node& node = model->node(it->second);
      if (!bodies(node).empty()) {
        append_body_clusters(node, fmt::format("n{}", it->second), backend_color(p.backend), &plan,
                             0, dot);
        continue;
      }
      dot += dot_node("    ", fmt::format("n{}", it->second), node, backend_color(p.backend));
    }
    dot += "  }\n";
  }
  append_edges(*model, "n", "  ", dot);
  return dot + "}\n";
}

}  // namespace collage
