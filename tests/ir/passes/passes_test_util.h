// What the pass tests share: typed values and constants to build small graphs
// with, the contents of a constant, and the node that writes a named value
// (passes renumber ids, names stay).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "collage/ir/graph.h"

namespace collage::testing {

inline TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }
inline TensorType i64(Shape shape) { return TensorType{DType::kInt64, std::move(shape)}; }

inline ValueId i64_constant(Graph& g, const std::string& name,
                            const std::vector<std::int64_t>& values) {
  return g.add_constant(name,
                        Tensor::from_vector(values, {static_cast<std::int64_t>(values.size())}));
}

inline ValueId f32_constant(Graph& g, const std::string& name, const std::vector<float>& values,
                            Shape shape) {
  return g.add_constant(name, Tensor::from_vector(values, std::move(shape)));
}

inline std::vector<std::int64_t> ints(const Tensor& tensor) {
  std::vector<std::int64_t> values;
  for (std::int64_t i = 0; i < tensor.numel(); ++i) values.push_back(tensor.int_at(i));
  return values;
}

inline std::vector<float> floats(const Tensor& tensor) {
  return std::vector<float>(tensor.data<float>(), tensor.data<float>() + tensor.numel());
}

// A Transpose's attributes: its permutation `axes`.
inline Attributes perm(std::vector<std::int64_t> axes) {
  Attributes attributes;
  attributes.set("perm", std::move(axes));
  return attributes;
}

// The node defining the value named `name`; the value must exist and have one.
inline const Node& node_writing(const Graph& g, const std::string& name) {
  return g.node(g.value(*g.find_value(name)).producer);
}

}  // namespace collage::testing
