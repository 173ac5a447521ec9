#include "collage/ir/passes/fuse_matmul_add.h"

#include <vector>

#include "collage/ir/passes/rewrite_util.h"

namespace collage {
namespace {

// True when a constant of `bias` shape broadcasts to [m, n] without growing it.
bool broadcasts_to(const Shape& bias, std::int64_t m, std::int64_t n) {
  if (bias.size() > 2) return false;
  const std::int64_t target[2] = {m, n};
  for (std::size_t d = 0; d < bias.size(); ++d) {
    const std::int64_t want = target[2 - bias.size() + d];
    if (bias[d] != 1 && bias[d] != want) return false;
  }
  return true;
}

}  // namespace

int fuse_matmul_add(Graph& graph) {
  const ValueUsers users(graph);
  std::vector<NodeId> fused;
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& add = graph.node(static_cast<NodeId>(n));
    if (!is_onnx_op(add, "Add") || add.inputs.size() != 2 || add.outputs.size() != 1) continue;
    for (int side = 0; side < 2; ++side) {
      const ValueId product = add.inputs[static_cast<std::size_t>(side)];
      const ValueId bias = add.inputs[static_cast<std::size_t>(1 - side)];
      const Node* matmul = producer_of(graph, product);
      if (matmul == nullptr || !is_onnx_op(*matmul, "MatMul")) continue;
      if (!users.only_by_one_node(product) || float_constant(graph, bias) == nullptr) continue;
      const TensorType& a = graph.type(matmul->inputs[0]);
      const TensorType& b = graph.type(matmul->inputs[1]);
      const TensorType& out = graph.type(product);
      if (a.rank() != 2 || b.rank() != 2 || a.dtype != DType::kFloat32) continue;
      if (out != graph.type(add.outputs[0])) continue;
      if (!broadcasts_to(graph.type(bias).shape, out.shape[0], out.shape[1])) continue;
      // The Add becomes the Gemm (it already writes the right value, after
      // every node the MatMul reads); the MatMul goes.
      const ValueId lhs = matmul->inputs[0];
      const ValueId rhs = matmul->inputs[1];
      fused.push_back(graph.value(product).producer);
      Node& gemm = graph.node(static_cast<NodeId>(n));
      gemm.op_type = "Gemm";
      gemm.domain.clear();
      gemm.inputs = {lhs, rhs, bias};
      gemm.attributes = {};
      break;
    }
  }
  if (fused.empty()) return 0;
  graph.erase_nodes(fused);
  graph.prune();
  return static_cast<int>(fused.size());
}

}  // namespace collage
