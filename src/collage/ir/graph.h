// Graph: a dataflow graph of operator nodes over typed values.
//
// The project's model IR, close to ONNX's: a Node applies an operator
// (op_type, attributes) to input values and defines output values; a Value is
// a graph input, an initializer (constant data such as weights), or the output
// of exactly one node. Nodes are kept in a topological order, which is also
// the order the reference executor runs them in. Ids are dense indices:
// ValueId into values(), NodeId into nodes(). Passes that remove nodes or
// values renumber them (see prune()).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "collage/ir/attribute.h"
#include "collage/ir/tensor.h"
#include "collage/ir/tensor_type.h"

namespace collage {

using ValueId = std::int32_t;
using NodeId = std::int32_t;
// An omitted optional input of a node (ONNX's empty input name).
inline constexpr ValueId kNoValue = -1;
// The producer of a graph input or an initializer.
inline constexpr NodeId kNoNode = -1;

struct Value {
  std::string name;
  TensorType type;
  NodeId producer = kNoNode;
  // Set for initializers and folded constants.
  std::optional<Tensor> constant;

  bool is_constant() const { return constant.has_value(); }
};

struct Node {
  std::string name;
  std::string op_type;
  // "" is the default ONNX domain.
  std::string domain;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  Attributes attributes;

  // The i-th input, or kNoValue when absent or omitted.
  ValueId input(std::size_t i) const { return i < inputs.size() ? inputs[i] : kNoValue; }
};

// A dimension of a graph input that the model leaves open (a named or
// unnamed dynamic dimension) and neither --input-shape nor the caller's data
// fixed. Every kernel and measurement is for concrete shapes, so import sets
// it to kOpenDimSize, the size inference engines' benchmark tools assume;
// the commands say so in one line.
inline constexpr std::int64_t kOpenDimSize = 1;
struct OpenDim {
  std::string input;
  int axis = 0;
  // The model's name for the dimension ("batch_size"); empty when unnamed.
  std::string param;
};

class Graph {
 public:
  // Building. Names must be unique among values; add_value and friends assert it.
  ValueId add_input(std::string name, TensorType type);
  ValueId add_constant(std::string name, Tensor tensor);
  // A value to be defined by a node added later.
  ValueId add_value(std::string name, TensorType type);
  void add_output(ValueId value);
  // Adds a node defining `outputs`, which must not have a producer yet. An
  // empty name gets a generated one ("<op_type>_<id>").
  NodeId add_node(std::string op_type, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
                  Attributes attributes = {}, std::string name = {});

  // Access.
  const Value& value(ValueId id) const { return values_[static_cast<std::size_t>(id)]; }
  Value& value(ValueId id) { return values_[static_cast<std::size_t>(id)]; }
  const Node& node(NodeId id) const { return nodes_[static_cast<std::size_t>(id)]; }
  Node& node(NodeId id) { return nodes_[static_cast<std::size_t>(id)]; }
  std::span<const Value> values() const { return values_; }
  std::span<const Node> nodes() const { return nodes_; }
  std::size_t num_values() const { return values_.size(); }
  std::size_t num_nodes() const { return nodes_.size(); }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  const TensorType& type(ValueId id) const { return value(id).type; }
  std::optional<ValueId> find_value(std::string_view name) const;
  std::optional<NodeId> find_node(std::string_view name) const;
  bool is_output(ValueId id) const;

  // For each value, the nodes that read it (each node once, in node order).
  std::vector<std::vector<NodeId>> consumers() const;

  // Rewriting.
  // Points every use of `from` (node inputs and graph outputs) at `to`.
  void replace_uses(ValueId from, ValueId to);
  // Removes the given nodes; their outputs lose their producer.
  void erase_nodes(const std::vector<NodeId>& doomed);
  // Reorders nodes topologically (stable for already-ordered graphs).
  // Throws Error if the graph has a cycle or a value with no definition.
  void sort_topologically();
  // Drops nodes that no graph output depends on and values nothing refers to.
  // Renumbers values and nodes.
  void prune();

  std::string name;
  // Operator set version of the default domain.
  std::int64_t opset = 13;
  // The default domain's version in the model file, when import converted
  // the graph to `opset` (onnx/opset_conversion.h); 0 when it did not.
  std::int64_t source_opset = 0;
  // Other imported domains and their versions ("com.microsoft" -> 1, ...).
  std::map<std::string, std::int64_t> other_opsets;
  // Dimensions of graph inputs the model left open and nothing else fixed,
  // which import set to kOpenDimSize (see OpenDim).
  std::vector<OpenDim> open_dims;
  // Every dimension of a graph input that the model leaves open, whatever
  // size --input-shape, the caller's data or import gave it: the dimensions
  // a session may meet at other sizes between runs (session/shape_plans.h).
  // An input the model gives no shape has all its dimensions here.
  std::vector<OpenDim> dynamic_dims;
  // For the body of a control-flow node (ir/control_flow.h): its last
  // `captured` inputs are values of the enclosing graph that the body reads,
  // which the node passes as its last `captured` inputs, in the same order.
  int captured = 0;
  // For a body typed and prepared for its node's input types
  // (onnx/type_inference.h): the body as imported, which typing for other
  // input types starts again from (what preparing folded held only for the
  // types it was prepared with).
  std::shared_ptr<const Graph> source;
  // For a partition of a model (extract_subgraph): the names of its inputs
  // and outputs that are the model's own graph inputs and outputs. A plan
  // hands those over plain whatever its backends compute in, so a
  // measurement times them plain (preferred_edges, cost/measurer.h).
  std::set<std::string> model_edges;

 private:
  ValueId new_value(std::string name, TensorType type);

  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::unordered_map<std::string, ValueId> value_by_name_;
};

// A standalone Graph holding copies of `nodes` of `graph` (ids in `graph`,
// any order; they are emitted in graph order). Its inputs are the
// non-constant values the nodes read from outside, in order of first use; its
// outputs are the values the nodes define that are read outside `nodes` or are
// graph outputs, in order of definition. Constants the nodes read become
// constants of the new graph (sharing their buffers). Value and node names
// are kept, so results map back by name. Its inputs that are graph inputs of
// `graph` and its outputs that are graph outputs of `graph` are its
// model_edges.
Graph extract_subgraph(const Graph& graph, const std::vector<NodeId>& nodes);

// The positions of `graph`'s model edges among its inputs and outputs
// ("i0", "o1"; inputs first, each side in order), those for which `keep`
// holds when it is given: how a partition's bytes and its measurement's
// key name them.
std::vector<std::string> model_edge_positions(const Graph& graph,
                                              const std::function<bool(ValueId)>& keep = {});

// Counts of each op_type, sorted by name.
std::map<std::string, int> op_histogram(const Graph& graph);

}  // namespace collage
