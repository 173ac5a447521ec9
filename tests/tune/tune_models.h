// Small float models for the tuning tests, built in C++, and the helpers
// that save, load and summarize them.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "collage/backends/native/native_backend.h"
#include "collage/ir/graph.h"
#include "collage/onnx/importer.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/search/shortest_path.h"

namespace collage::testing {

// Builds a model op by op; every value has the type given at construction,
// constants are vectors broadcast along the last dimension.
class ChainBuilder {
 public:
  ChainBuilder(Shape shape, const std::string& input_name)
      : type_{DType::kFloat32, std::move(shape)} {
    last_ = graph_.add_input(input_name, type_);
  }

  // `op_type`(last, constant) with the constant filled with `start`, `start
  // + step`, ...; a constant of at most 64 elements, so its values count in
  // the structural hash.
  ChainBuilder& binary(const std::string& op_type, const std::string& name, float start,
                       float step) {
    std::int64_t width = type_.shape.back();
    std::vector<float> values(static_cast<std::size_t>(width));
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] = start + step * static_cast<float>(i);
    }
    ValueId constant = graph_.add_constant(name + "_c", Tensor::from_vector(values, {width}));
    return append(op_type, {last_, constant}, name);
  }

  ChainBuilder& unary(const std::string& op_type, const std::string& name) {
    return append(op_type, {last_}, name);
  }

  // last × a square weight of the last dimension's size.
  ChainBuilder& matmul(const std::string& name) {
    std::int64_t width = type_.shape.back();
    std::vector<float> weight(static_cast<std::size_t>(width * width));
    for (std::size_t i = 0; i < weight.size(); ++i) {
      weight[i] = static_cast<float>(i % 7) * 0.05f - 0.15f;
    }
    ValueId constant =
        graph_.add_constant(name + "_w", Tensor::from_vector(weight, {width, width}));
    return append("MatMul", {last_, constant}, name);
  }

  // The model, with the last value as its output.
  Graph finish() {
    graph_.add_output(last_);
    return std::move(graph_);
  }

 private:
  ChainBuilder& append(const std::string& op_type, std::vector<ValueId> inputs,
                       const std::string& name) {
    ValueId out = graph_.add_value(name + "_out", type_);
    graph_.add_node(op_type, std::move(inputs), {out}, {}, name);
    last_ = out;
    return *this;
  }

  Graph graph_;
  TensorType type_;
  ValueId last_ = kNoValue;
};

// relu -> add -> mul: one op of each kind the planted backends claim.
inline Graph relu_add_mul_model() {
  return ChainBuilder({4, 64}, "x")
      .unary("Relu", "relu")
      .binary("Add", "add", 0.5f, 0.01f)
      .binary("Mul", "mul", 1.5f, -0.01f)
      .finish();
}

// matmul -> bias -> relu: a dense layer.
inline Graph dense_block_model() {
  return ChainBuilder({8, 32}, "x")
      .matmul("matmul")
      .binary("Add", "bias", 0.1f, 0.01f)
      .unary("Relu", "relu")
      .finish();
}

// The same dense layer (under other names), then a scale and a sigmoid.
inline Graph dense_block_then_scale_model() {
  return ChainBuilder({8, 32}, "features")
      .matmul("dense")
      .binary("Add", "dense_bias", 0.1f, 0.01f)
      .unary("Relu", "dense_relu")
      .binary("Mul", "scale", 0.5f, 0.02f)
      .unary("Sigmoid", "gate")
      .finish();
}

// A chain of `layers` (matmul, add, relu) layers whose constants all differ,
// so that few candidates share a measurement.
inline Graph layered_model(int layers) {
  ChainBuilder builder({16, 64}, "x");
  for (int i = 0; i < layers; ++i) {
    std::string suffix = std::to_string(i);
    builder.matmul("matmul" + suffix)
        .binary("Add", "add" + suffix, 0.01f * static_cast<float>(i), 0.001f)
        .unary("Relu", "relu" + suffix);
  }
  return builder.finish();
}

// The model at `path` as the tools load it (native constant folding).
inline Graph import_model(const std::string& path) {
  ImportOptions options;
  options.evaluator = &native_evaluator();
  return import_onnx(path, options);
}

// Names of the operators of `graph`, sorted.
inline std::vector<std::string> sorted_node_names(const Graph& graph) {
  std::vector<std::string> names;
  for (const Node& node : graph.nodes()) names.push_back(node.name);
  std::sort(names.begin(), names.end());
  return names;
}

// Each chosen partition as (backend, node names in graph order).
using PartitionSummary = std::vector<std::pair<std::string, std::vector<std::string>>>;

inline PartitionSummary summarize(const DataflowGraph& dfg,
                                  const std::vector<ChosenPartition>& partitions) {
  PartitionSummary summary;
  for (const ChosenPartition& chosen : partitions) {
    std::vector<std::string> names;
    for (NodeId id : chosen.candidate.sub_graph.node_ids(dfg)) {
      names.push_back(dfg.graph().node(id).name);
    }
    summary.emplace_back(chosen.candidate.spec_name(), std::move(names));
  }
  return summary;
}

}  // namespace collage::testing
