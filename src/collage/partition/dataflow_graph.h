// DataflowGraph: a Graph indexed for partitioning.
//
// The partitioner reasons about sets of nodes, so every node gets a dense
// index: graph inputs, constants (initializers) and operator nodes alike, in
// post-DFS order from the graph outputs. That order is topological (a node's
// producers have smaller indices), which the search relies on: it always
// covers the smallest uncovered index next. For each index the graph keeps
// its producers (inputs), its consumers (users), its OpKind and the
// transitive closure of its consumers (downstream_of), which makes the
// convexity test of a sub-graph a few bitset operations.
//
// Graph inputs and constants are "host" indices: they are not computed by
// any backend, and every partition reads them from the host.
//
// A DataflowGraph refers to its Graph, which must outlive it and must not
// change while it is in use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "collage/ir/graph.h"
#include "collage/partition/index_set.h"
#include "collage/partition/op_kind.h"

namespace collage {

class DataflowGraph {
 public:
  enum class Role { kInput, kConstant, kOperator };

  // Indexes `graph`. Throws Error when a node reads a value that nothing
  // defines (the graph must be well formed).
  explicit DataflowGraph(const Graph& graph);

  const Graph& graph() const { return *graph_; }
  // Number of indices.
  std::size_t size() const { return entries_.size(); }

  Role role(PostDfsIndex index) const { return entry(index).role; }
  bool is_host(PostDfsIndex index) const { return role(index) != Role::kOperator; }
  bool is_operator(PostDfsIndex index) const { return role(index) == Role::kOperator; }

  // The distinct indices whose values `index` reads, in order of first use.
  const std::vector<PostDfsIndex>& inputs(PostDfsIndex index) const { return entry(index).inputs; }
  // The distinct indices that read a value of `index`, in increasing order.
  const std::vector<PostDfsIndex>& users(PostDfsIndex index) const { return entry(index).users; }
  // Whether `index` defines a graph output (which then flows out of any
  // sub-graph holding it).
  bool is_graph_output(PostDfsIndex index) const { return entry(index).graph_output; }
  // Every index reachable from `index` over one or more dataflow edges
  // (`index` itself is not included).
  const IndexSet& downstream_of(PostDfsIndex index) const { return downstream_[index]; }
  // The fusion kind of an operator; host indices are elementwise (they never
  // constrain a combination).
  OpKind kind(PostDfsIndex index) const { return entry(index).kind; }

  // Back to the Graph: the node of an operator index, the value of a host index.
  NodeId node_id(PostDfsIndex index) const;
  const Node& node(PostDfsIndex index) const { return graph_->node(node_id(index)); }
  ValueId value_id(PostDfsIndex index) const;
  // The index of a node, and the index defining a value (its producer, or the
  // value itself for inputs and constants). Nullopt for a constant nothing reads.
  PostDfsIndex index_of_node(NodeId node) const;
  std::optional<PostDfsIndex> index_of_value(ValueId value) const;

  IndexSet empty_set() const { return IndexSet(size()); }
  // All input and constant indices.
  const IndexSet& host_set() const { return host_; }
  // The runtime-shaped regions (ir/runtime_shapes.h): each is a partition
  // of its own (SubGraph::invalid_reason).
  const IndexSet& runtime_regions() const { return runtime_regions_; }
  // The node ids of the operator indices in `set`, in increasing id order.
  std::vector<NodeId> node_ids(const IndexSet& set) const;

  // "#4 Relu 'relu_1'" or "#0 input 'x'", for messages and debugging.
  std::string describe(PostDfsIndex index) const;

 private:
  struct Entry {
    Role role = Role::kOperator;
    // NodeId for operators, ValueId for host indices.
    std::int32_t id = -1;
    std::vector<PostDfsIndex> inputs;
    std::vector<PostDfsIndex> users;
    bool graph_output = false;
    OpKind kind = OpKind::kElementwise;
  };

  const Entry& entry(PostDfsIndex index) const { return entries_[index]; }

  enum class VisitState : char { kUnvisited, kOnStack, kDone };
  // Building, in the order the constructor runs: every node and host value
  // indexed in post-DFS order (a node after its producers), the edges
  // between entries, and each entry's downstream closure.
  void index_entries();
  void index_with_producers(NodeId root, std::vector<VisitState>& state,
                            const std::unordered_set<ValueId>& graph_inputs);
  void index_host(ValueId id);
  void index_node(NodeId id);
  void link_edges();
  void close_downstream();

  const Graph* graph_;
  std::vector<Entry> entries_;
  std::vector<IndexSet> downstream_;
  IndexSet host_;
  IndexSet runtime_regions_;
  std::vector<PostDfsIndex> index_of_node_;
  std::vector<std::optional<PostDfsIndex>> index_of_value_;
};

}  // namespace collage
