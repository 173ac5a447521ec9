#include "collage/partition/dataflow_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <unordered_set>

#include "collage/ir/error.h"
#include "collage/ir/runtime_shapes.h"

namespace collage {

DataflowGraph::DataflowGraph(const Graph& graph) : graph_(&graph) {
  index_entries();
  link_edges();
  host_ = IndexSet(entries_.size());
  runtime_regions_ = IndexSet(entries_.size());
  for (PostDfsIndex index = 0; index < entries_.size(); ++index) {
    if (entries_[index].role != Role::kOperator) {
      host_.add(index);
    } else if (is_runtime_shaped_region(node(index))) {
      runtime_regions_.add(index);
    }
  }
  close_downstream();
}

void DataflowGraph::index_host(ValueId id) {
  if (index_of_value_[static_cast<std::size_t>(id)]) return;
  const Value& value = graph_->value(id);
  Entry entry;
  entry.role = value.is_constant() ? Role::kConstant : Role::kInput;
  entry.id = id;
  index_of_value_[static_cast<std::size_t>(id)] = entries_.size();
  entries_.push_back(std::move(entry));
}

void DataflowGraph::index_node(NodeId id) {
  const Node& node = graph_->node(id);
  Entry entry;
  entry.role = Role::kOperator;
  entry.id = id;
  bool default_domain = node.domain.empty() || node.domain == "ai.onnx";
  entry.kind = default_domain ? op_kind_of(node.op_type) : OpKind::kOpaque;
  index_of_node_[static_cast<std::size_t>(id)] = entries_.size();
  for (ValueId output : node.outputs)
    index_of_value_[static_cast<std::size_t>(output)] = entries_.size();
  entries_.push_back(std::move(entry));
}

void DataflowGraph::index_entries() {
  const Graph& graph = *graph_;
  constexpr PostDfsIndex kUnassigned = static_cast<PostDfsIndex>(-1);
  index_of_node_.assign(graph.num_nodes(), kUnassigned);
  index_of_value_.assign(graph.num_values(), std::nullopt);
  const std::unordered_set<ValueId> graph_inputs(graph.inputs().begin(), graph.inputs().end());
  std::vector<VisitState> state(graph.num_nodes(), VisitState::kUnvisited);
  for (ValueId output : graph.outputs()) {
    const Value& value = graph.value(output);
    if (value.producer != kNoNode) {
      index_with_producers(value.producer, state, graph_inputs);
      continue;
    }
    if (!value.is_constant() && !graph_inputs.count(output)) {
      throw Error("is a graph output that nothing defines",
                  {.field = "output '" + value.name + "'"});
    }
    index_host(output);
  }
  // Nodes no output needs and inputs nothing reads still get an index, so
  // that every node of the graph can be placed.
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    index_with_producers(static_cast<NodeId>(n), state, graph_inputs);
  }
  for (ValueId input : graph.inputs()) index_host(input);
}

// Iterative post-order DFS over producers, so that deep graphs cannot
// overflow the stack. A node gets its index once all its producers have one.
void DataflowGraph::index_with_producers(NodeId root, std::vector<VisitState>& state,
                                         const std::unordered_set<ValueId>& graph_inputs) {
  if (state[static_cast<std::size_t>(root)] != VisitState::kUnvisited) return;
  std::vector<std::pair<NodeId, std::size_t>> stack = {{root, 0}};
  state[static_cast<std::size_t>(root)] = VisitState::kOnStack;
  while (!stack.empty()) {
    NodeId id = stack.back().first;
    std::size_t position = stack.back().second;
    const Node& node = graph_->node(id);
    if (position == node.inputs.size()) {
      index_node(id);
      state[static_cast<std::size_t>(id)] = VisitState::kDone;
      stack.pop_back();
      continue;
    }
    ++stack.back().second;
    ValueId input = node.inputs[position];
    if (input == kNoValue) continue;
    const Value& value = graph_->value(input);
    if (value.producer == kNoNode) {
      if (!value.is_constant() && !graph_inputs.count(input)) {
        throw Error("reads a value that nothing defines",
                    {.node = node.name, .field = "input '" + value.name + "'"});
      }
      index_host(input);
      continue;
    }
    VisitState& producer_state = state[static_cast<std::size_t>(value.producer)];
    if (producer_state == VisitState::kOnStack) {
      throw Error("the graph has a cycle", {.node = node.name});
    }
    if (producer_state == VisitState::kDone) continue;
    producer_state = VisitState::kOnStack;
    stack.emplace_back(value.producer, 0);
  }
}

void DataflowGraph::link_edges() {
  for (PostDfsIndex index = 0; index < entries_.size(); ++index) {
    Entry& entry = entries_[index];
    if (entry.role != Role::kOperator) continue;
    for (ValueId input : graph_->node(entry.id).inputs) {
      if (input == kNoValue) continue;
      PostDfsIndex producer = *index_of_value_[static_cast<std::size_t>(input)];
      assert(producer < index && "DataflowGraph: post-DFS order must be topological");
      if (std::find(entry.inputs.begin(), entry.inputs.end(), producer) != entry.inputs.end()) {
        continue;
      }
      entry.inputs.push_back(producer);
      // Visiting consumers in increasing index keeps users sorted.
      entries_[producer].users.push_back(index);
    }
  }
  for (ValueId output : graph_->outputs()) {
    entries_[*index_of_value_[static_cast<std::size_t>(output)]].graph_output = true;
  }
}

// Users have larger indices, so one backward pass builds every closure.
void DataflowGraph::close_downstream() {
  downstream_.assign(entries_.size(), IndexSet(entries_.size()));
  for (PostDfsIndex index = entries_.size(); index-- > 0;) {
    for (PostDfsIndex user : entries_[index].users) {
      downstream_[index].add(user);
      downstream_[index] |= downstream_[user];
    }
  }
}

NodeId DataflowGraph::node_id(PostDfsIndex index) const {
  assert(is_operator(index) && "DataflowGraph::node_id: not an operator index");
  return static_cast<NodeId>(entry(index).id);
}

ValueId DataflowGraph::value_id(PostDfsIndex index) const {
  assert(is_host(index) && "DataflowGraph::value_id: not a host index");
  return static_cast<ValueId>(entry(index).id);
}

PostDfsIndex DataflowGraph::index_of_node(NodeId node) const {
  assert(node >= 0 && static_cast<std::size_t>(node) < index_of_node_.size() &&
         "DataflowGraph::index_of_node: not a node of the graph");
  return index_of_node_[static_cast<std::size_t>(node)];
}

std::optional<PostDfsIndex> DataflowGraph::index_of_value(ValueId value) const {
  assert(value >= 0 && static_cast<std::size_t>(value) < index_of_value_.size() &&
         "DataflowGraph::index_of_value: not a value of the graph");
  return index_of_value_[static_cast<std::size_t>(value)];
}

std::vector<NodeId> DataflowGraph::node_ids(const IndexSet& set) const {
  std::vector<NodeId> ids;
  for (PostDfsIndex index : set) {
    if (is_operator(index)) ids.push_back(node_id(index));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::string DataflowGraph::describe(PostDfsIndex index) const {
  switch (role(index)) {
    case Role::kInput:
      return fmt::format("#{} input '{}'", index, graph_->value(value_id(index)).name);
    case Role::kConstant:
      return fmt::format("#{} constant '{}'", index, graph_->value(value_id(index)).name);
    case Role::kOperator: {
      const Node& n = node(index);
      return fmt::format("#{} {} '{}'", index, n.op_type, n.name);
    }
  }
  return fmt::format("#{}", index);
}

}  // namespace collage
