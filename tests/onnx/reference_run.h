// Runs an imported graph with the native reference executor, so that tests
// of the importer can check what a model computes, not only its types.
#pragma once

#include <vector>

#include "collage/backends/native/native_backend.h"
#include "collage/ir/graph.h"

namespace collage::testing {

inline std::vector<Tensor> run_reference(const Graph& graph, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outputs;
  for (ValueId output : graph.outputs()) outputs.push_back(Tensor::allocate(graph.type(output)));
  compile_reference(graph, 1)->run(inputs, outputs);
  return outputs;
}

// 0, 1, 2, ... in a float tensor of `shape`.
inline Tensor iota(Shape shape) {
  Tensor tensor = Tensor::allocate(TensorType{DType::kFloat32, std::move(shape)});
  for (std::int64_t i = 0; i < tensor.numel(); ++i) tensor.data<float>()[i] = float(i);
  return tensor;
}

inline std::vector<float> floats(const Tensor& tensor) {
  return std::vector<float>(tensor.data<float>(), tensor.data<float>() + tensor.numel());
}

}  // namespace collage::testing
