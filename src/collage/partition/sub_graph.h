// SubGraph: a set of nodes of a DataflowGraph that could run as one partition.
//
// The inside set is the definition; everything else is derived from it once,
// at construction, because the partitioner asks for it over and over:
//   entry   inside nodes that read a value from outside,
//   exit    inside nodes whose values flow outside or are graph outputs,
//   input   outside nodes whose values flow inside,
//   output  outside nodes that read a value from inside,
//   depth   the number of operators on the longest path inside,
//   kind    the largest OpKind inside.
// A sub-graph can become a partition only if it is valid under the
// SubGraphConfig of its backend: it must be convex (no dataflow path leaves it
// and comes back, or the partition would have to wait for itself), and it
// may have to respect limits on exits, depth and taps (an exit node whose
// value is also used inside, which some backends cannot express).
#pragma once

#include <cassert>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "collage/ir/graph.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/partition/index_set.h"
#include "collage/partition/op_kind.h"

namespace collage {

// The shape constraints a backend puts on its partitions.
struct SubGraphConfig {
  static constexpr std::size_t kNoLimit = std::numeric_limits<std::size_t>::max();

  // Most exit nodes a partition may have (a library call returns one tensor).
  std::size_t max_exits = kNoLimit;
  // Whether an exit node may also feed nodes inside.
  bool allow_taps = false;
  // Most operators on the longest path inside.
  std::size_t max_depth = kNoLimit;
};

class SubGraph {
 public:
  // `inside` must be a set over `dfg`'s indices.
  SubGraph(const DataflowGraph& dfg, IndexSet inside, std::string label = {});

  const IndexSet& inside() const { return inside_; }
  const IndexSet& entry() const { return entry_; }
  const IndexSet& exit() const { return exit_; }
  const IndexSet& input() const { return input_; }
  const IndexSet& output() const { return output_; }
  std::size_t depth() const { return depth_; }
  OpKind kind() const { return kind_; }
  // What the sub-graph is, for people: a pattern name, or the op types joined by '+'.
  const std::string& label() const { return label_; }

  // The smallest inside index (the search files a candidate under it).
  PostDfsIndex first_inside() const {
    auto first = inside_.first_inside();
    assert(first && "SubGraph::first_inside: empty sub-graph");
    return *first;
  }
  // Number of inside indices.
  std::size_t size() const { return inside_.popcount(); }
  // Number of inside operators (constants merged into a sub-graph do not count).
  std::size_t operator_count(const DataflowGraph& dfg) const;

  // No dataflow path leaves the sub-graph and re-enters it.
  bool is_convex(const DataflowGraph& dfg) const;
  // An exit node that also feeds a node inside.
  bool has_taps(const DataflowGraph& dfg) const;
  bool is_valid(const DataflowGraph& dfg, const SubGraphConfig& config) const;
  // Why the sub-graph is not valid under `config`, or nullopt when it is.
  std::optional<std::string> invalid_reason(const DataflowGraph& dfg,
                                            const SubGraphConfig& config) const;

  // Whether a value of this sub-graph flows into `downstream`.
  bool feeds(const SubGraph& downstream) const { return output_.intersects(downstream.inside_); }
  // Whether either sub-graph feeds the other.
  bool touches(const SubGraph& other) const { return feeds(other) || other.feeds(*this); }

  // The sub-graph over both inside sets, which must be disjoint. Its label
  // joins the labels, this one first.
  SubGraph disjoint_union(const DataflowGraph& dfg, const SubGraph& other) const;

  // The operator node ids inside, in increasing order.
  std::vector<NodeId> node_ids(const DataflowGraph& dfg) const { return dfg.node_ids(inside_); }
  // A standalone Graph of the inside operators: its inputs are the
  // non-constant values read from outside, its outputs the values that flow
  // outside or are graph outputs (see extract_subgraph).
  Graph extract(const DataflowGraph& dfg) const;

  // "conv_relu{3,4}"
  std::string to_string() const;

  friend bool operator==(const SubGraph& a, const SubGraph& b) { return a.inside_ == b.inside_; }

 private:
  IndexSet inside_;
  IndexSet entry_;
  IndexSet exit_;
  IndexSet input_;
  IndexSet output_;
  std::size_t depth_ = 0;
  OpKind kind_ = OpKind::kElementwise;
  std::string label_;
};

}  // namespace collage
