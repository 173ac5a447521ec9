#include "collage/ir/passes/collapse_reshapes.h"

#include <vector>

#include "collage/ir/passes/partial_type.h"
#include "collage/ir/passes/rewrite_util.h"

namespace collage {
namespace {

bool is_shape_only(const Node& node) {
  return (is_onnx_op(node, "Reshape") || is_onnx_op(node, "Flatten") ||
          is_onnx_op(node, "Squeeze") || is_onnx_op(node, "Unsqueeze")) &&
         node.outputs.size() == 1 && node.input(0) != kNoValue;
}

}  // namespace

int collapse_reshapes(Graph& graph) {
  const std::size_t nodes_before = graph.num_nodes();
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(static_cast<NodeId>(n));
    if (!is_shape_only(node)) continue;
    const ValueId out = node.outputs[0];
    const TensorType& out_type = graph.type(out);
    if (!is_static(out_type)) continue;
    // Walk up to the first value that is not made by a shape-only op.
    ValueId source = node.inputs[0];
    while (const Node* producer = producer_of(graph, source)) {
      if (!is_shape_only(*producer)) break;
      source = producer->inputs[0];
    }
    if (graph.type(source).shape == out_type.shape) {
      redirect_uses(graph, out, source);
      continue;
    }
    if (source == node.inputs[0]) continue;
    const ValueId shape = graph.add_constant(
        unused_value_name(graph, graph.value(out).name + "/shape"),
        Tensor::from_vector(std::vector<std::int64_t>(out_type.shape.begin(), out_type.shape.end()),
                            {out_type.rank()}));
    Node& reshape = graph.node(static_cast<NodeId>(n));
    reshape.op_type = "Reshape";
    reshape.domain.clear();
    reshape.inputs = {source, shape};
    reshape.attributes = {};
  }
  // Links nothing reads any more are dead now.
  graph.prune();
  return static_cast<int>(nodes_before - graph.num_nodes());
}

}  // namespace collage
