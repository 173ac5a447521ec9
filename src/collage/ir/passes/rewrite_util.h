// Small helpers shared by the graph rewrites in this folder.
//
// A rewrite looks at a node, the values around it, who else reads them and
// which of them are constants; then it replaces a chain of nodes by fewer
// nodes computing the same values. These helpers answer those questions the
// same way in every pass, and make the one move every pass needs: letting
// the readers of one value read another while the model's outputs keep their
// names.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collage/ir/graph.h"

namespace collage {

// Who reads each value, kept up to date by the pass when it changes the graph.
class ValueUsers {
 public:
  explicit ValueUsers(const Graph& graph) : graph_(&graph), users_(graph.consumers()) {}

  // The nodes that read `value` (each once).
  const std::vector<NodeId>& of(ValueId value) const {
    return users_[static_cast<std::size_t>(value)];
  }
  // True when `value` is read by exactly one node and is not a graph output:
  // a rewrite may then absorb the node that defines it.
  bool only_by_one_node(ValueId value) const {
    return of(value).size() == 1 && !graph_->is_output(value);
  }

 private:
  const Graph* graph_;
  std::vector<std::vector<NodeId>> users_;
};

// Whether `node` is an op of the default ONNX domain named `op_type`.
bool is_onnx_op(const Node& node, const char* op_type);

// The node that defines `value`, or nullptr for graph inputs and constants.
const Node* producer_of(const Graph& graph, ValueId value);
// The node defining `value` when it is the ONNX op `op_type`, else nullptr.
const Node* made_by(const Graph& graph, ValueId value, const char* op_type);

// The value of a one-element float or integer constant, or nullopt.
std::optional<double> scalar_constant(const Graph& graph, ValueId value);
// True when `value` is a one-element constant within `tolerance` of `expected`.
bool is_scalar_constant(const Graph& graph, ValueId value, double expected,
                        double tolerance = 1e-6);
// The float32 constant behind `value`, or nullptr.
const Tensor* float_constant(const Graph& graph, ValueId value);
// The integers of an int32 or int64 constant of one axis (a Slice's starts,
// a Gather's indices, a Pad's pads), or nullopt.
std::optional<std::vector<std::int64_t>> int_constant(const Graph& graph, ValueId value);

// A constant operand of an elementwise op, as one value per channel: every
// dimension of `c` is 1 except, possibly, the one that broadcasts (right-
// aligned, as ONNX broadcasts) against `axis` of a value of `rank` axes,
// which is `channels`. nullopt when it varies along anything else, or when
// `c` is nullptr.
std::optional<std::vector<double>> per_channel_values(const Tensor* c, int rank, int axis,
                                                      std::int64_t channels);
// The values as a float32 tensor of one axis.
Tensor channel_tensor(const std::vector<double>& values);

// Makes every reader of `from` read `to`. When `from` is a graph output,
// `to` takes over its name (so the model's outputs keep the names users
// know); that needs `to` to be an ordinary node output not visible already.
// Returns false, changing nothing, when it is not. Names are swapped, not
// duplicated; Graph::prune() rebuilds the name index.
bool redirect_uses(Graph& graph, ValueId from, ValueId to);

// `base`, or `base_1`, `base_2`, ... : a value name the graph does not use.
std::string unused_value_name(const Graph& graph, const std::string& base);

// True when the two attribute sets are equal (tensor attributes compare by
// type and bytes).
bool same_attributes(const Attributes& a, const Attributes& b);

}  // namespace collage
