// Small graphs for partitioning and search tests, built by name.
#pragma once

#include <string>
#include <vector>

#include "collage/ir/graph.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/partition/index_set.h"

namespace collage::testing {

// Every value is f32[1,8]; each op defines one value named like the node.
class GraphBuilder {
 public:
  ValueId input(const std::string& name) {
    return graph_.add_input(name, TensorType{DType::kFloat32, {1, 8}});
  }
  ValueId constant(const std::string& name) {
    return graph_.add_constant(name, Tensor::zeros(TensorType{DType::kFloat32, {1, 8}}));
  }
  ValueId op(const std::string& op_type, const std::vector<ValueId>& inputs,
             const std::string& name) {
    return ops(op_type, inputs, name, 1).front();
  }
  // A node with `outputs` outputs named "<name>:0", "<name>:1", ...
  std::vector<ValueId> ops(const std::string& op_type, const std::vector<ValueId>& inputs,
                           const std::string& name, int outputs) {
    std::vector<ValueId> values;
    for (int i = 0; i < outputs; ++i) {
      std::string value_name = outputs == 1 ? name : name + ":" + std::to_string(i);
      values.push_back(graph_.add_value(value_name, TensorType{DType::kFloat32, {1, 8}}));
    }
    graph_.add_node(op_type, inputs, values, {}, name);
    return values;
  }
  void output(ValueId value) { graph_.add_output(value); }
  Graph& graph() { return graph_; }

 private:
  Graph graph_;
};

// The index of the node called `name`.
inline PostDfsIndex index_of(const DataflowGraph& dfg, const std::string& name) {
  return dfg.index_of_node(*dfg.graph().find_node(name));
}

// The set of the nodes called `names`.
inline IndexSet set_of(const DataflowGraph& dfg, const std::vector<std::string>& names) {
  IndexSet set(dfg.size());
  for (const std::string& name : names) set.add(index_of(dfg, name));
  return set;
}

// The names of the operator nodes in `set`, in index order.
inline std::vector<std::string> names_of(const DataflowGraph& dfg, const IndexSet& set) {
  std::vector<std::string> names;
  for (PostDfsIndex index : set) {
    if (dfg.is_operator(index)) names.push_back(dfg.node(index).name);
  }
  return names;
}

}  // namespace collage::testing
