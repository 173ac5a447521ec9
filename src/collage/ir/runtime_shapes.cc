#include "collage/ir/runtime_shapes.h"

#include <fmt/format.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "collage/ir/control_flow.h"
#include "collage/ir/error.h"
#include "collage/ir/passes/partial_type.h"

namespace collage {
namespace {

bool known_now(const TensorType& type) { return is_static(type) && !type.at_run_time; }

// The nodes reachable from `from` along `next`, `from` included.
std::vector<bool> reach(const std::vector<bool>& from,
                        const std::vector<std::vector<NodeId>>& next) {
  std::vector<bool> seen = from;
  std::vector<NodeId> stack;
  for (std::size_t n = 0; n < from.size(); ++n) {
    if (from[n]) stack.push_back(static_cast<NodeId>(n));
  }
  while (!stack.empty()) {
    const NodeId n = stack.back();
    stack.pop_back();
    for (NodeId m : next[static_cast<std::size_t>(n)]) {
      if (seen[static_cast<std::size_t>(m)]) continue;
      seen[static_cast<std::size_t>(m)] = true;
      stack.push_back(m);
    }
  }
  return seen;
}

// Marks the outputs of `region` whose shapes are not static at_run_time.
void mark_outputs(Graph& graph, const Node& region) {
  for (ValueId id : region.outputs) {
    if (id == kNoValue) continue;
    TensorType& type = graph.value(id).type;
    if (is_static(type) && !type.at_run_time) continue;
    try {
      type = at_run_time_type(type);
    } catch (const Error& error) {
      throw Error(error.message(),
                  {.node = region.name, .field = "value " + quote_untrusted(graph.value(id).name)});
    }
  }
}

std::string unused_node_name(const Graph& graph, const std::string& base) {
  std::string name = base;
  for (int i = 1; graph.find_node(name); ++i) name = fmt::format("{}_{}", base, i);
  return name;
}

std::atomic<GraphTyping> installed_typing{nullptr};
std::atomic<std::int64_t> memory_budget{0};

}  // namespace

void set_runtime_typing(GraphTyping typing) { installed_typing.store(typing); }

void type_at_run_time(Graph& graph) {
  const GraphTyping typing = installed_typing.load();
  if (typing == nullptr) throw Error("no shape inference is installed to type a region's nodes");
  typing(graph);
}

void set_runtime_memory_budget(std::int64_t bytes) { memory_budget.store(bytes); }
std::int64_t runtime_memory_budget() { return memory_budget.load(); }

bool is_runtime_shaped_region(const Node& node) {
  return node.domain == kRuntimeShapesDomain && node.op_type == kRuntimeShapesOp;
}

TensorType at_run_time_type(const TensorType& partial) {
  if (!has_known_rank(partial)) {
    throw Error("its rank is known only when the model runs, which Collage does not support");
  }
  TensorType type = partial;
  for (std::int64_t& dim : type.shape) {
    if (dim < 0) dim = 0;
  }
  type.at_run_time = true;
  return type;
}

int enclose_runtime_shapes(Graph& graph) {
  const std::size_t count = graph.num_nodes();
  std::vector<bool> dynamic(count, false);
  bool any = false;
  for (std::size_t n = 0; n < count; ++n) {
    const Node& node = graph.node(static_cast<NodeId>(n));
    if (is_runtime_shaped_region(node)) continue;
    for (const std::vector<ValueId>* ids : {&node.inputs, &node.outputs}) {
      for (ValueId id : *ids) {
        if (id != kNoValue && !known_now(graph.type(id))) dynamic[n] = true;
      }
    }
    // A Loop whose iterations differ in shape (a slice at the iteration
    // number), though the model declares what it ends with.
    if (node.op_type == "Loop" && node.domain.empty()) {
      for (const Graph* body : bodies(node)) {
        for (const Value& value : body->values()) dynamic[n] = dynamic[n] || !known_now(value.type);
      }
    }
    any = any || dynamic[n];
  }
  if (!any) {
    for (std::size_t n = 0; n < count; ++n) {
      const Node& node = graph.node(static_cast<NodeId>(n));
      if (is_runtime_shaped_region(node)) mark_outputs(graph, node);
    }
    return 0;
  }
  // Every node on a path between two enclosed ones is enclosed too: the
  // region becomes one node, which must not both feed and read the rest.
  std::vector<std::vector<NodeId>> readers = graph.consumers();
  std::vector<std::vector<NodeId>> successors(count);
  std::vector<std::vector<NodeId>> predecessors(count);
  for (std::size_t n = 0; n < count; ++n) {
    for (ValueId id : graph.node(static_cast<NodeId>(n)).outputs) {
      if (id == kNoValue) continue;
      for (NodeId reader : readers[static_cast<std::size_t>(id)]) {
        successors[n].push_back(reader);
        predecessors[static_cast<std::size_t>(reader)].push_back(static_cast<NodeId>(n));
      }
    }
  }
  const std::vector<bool> after = reach(dynamic, successors);
  const std::vector<bool> before = reach(dynamic, predecessors);
  std::vector<NodeId> enclosed;
  for (std::size_t n = 0; n < count; ++n) {
    if (dynamic[n] || (after[n] && before[n])) enclosed.push_back(static_cast<NodeId>(n));
  }

  Graph body = extract_subgraph(graph, enclosed);
  body.name = "runtime_shapes";
  body.model_edges.clear();
  // A value read after the region must have a known rank; where one has
  // not, inference failed rather than the data deciding (an op it does not
  // know): the graph is left for import to report.
  for (ValueId id : body.outputs()) {
    if (!has_known_rank(body.type(id))) return 0;
  }
  std::vector<ValueId> inputs;
  for (ValueId id : body.inputs()) inputs.push_back(*graph.find_value(body.value(id).name));
  std::vector<ValueId> outputs;
  for (ValueId id : body.outputs()) outputs.push_back(*graph.find_value(body.value(id).name));
  graph.erase_nodes(enclosed);
  Attributes attributes;
  attributes.set("body", std::make_shared<const Graph>(std::move(body)));
  const NodeId region =
      graph.add_node(std::string(kRuntimeShapesOp), inputs, outputs, std::move(attributes),
                     unused_node_name(graph, "runtime_shapes"));
  graph.node(region).domain = std::string(kRuntimeShapesDomain);
  mark_outputs(graph, graph.node(region));
  graph.sort_topologically();
  // The values the region keeps to itself are left without a producer.
  graph.prune();
  return static_cast<int>(enclosed.size());
}

}  // namespace collage
