#include "collage/backends/onednn/transpose.h"

#include <fmt/format.h>

#include "collage/backends/onednn/layout.h"
#include "collage/backends/onednn/node_checks.h"
#include "collage/ir/transpose_perm.h"

namespace collage::onednn {

Result<TransposeSpec> transpose_spec(const Graph& graph, const Node& node) {
  if (node.op_type != "Transpose" || !in_onnx_domain(node)) {
    return Failure{fmt::format("{} is not a Transpose", node.op_type)};
  }
  if (node.inputs.size() != 1 || node.input(0) == kNoValue || node.outputs.size() != 1) {
    return Failure{"Transpose needs one input and one output"};
  }
  const TensorType& type = graph.type(node.input(0));
  if (!onednn_data_type(type.dtype)) {
    return Failure{
        fmt::format("Transpose of {}, which oneDNN does not compute with", dtype_name(type.dtype))};
  }
  const int rank = type.rank();
  if (rank < 1 || rank > DNNL_MAX_NDIMS) {
    return Failure{fmt::format("Transpose of rank {} (oneDNN: 1 to {})", rank, DNNL_MAX_NDIMS)};
  }
  if (type.numel() == 0) return Failure{"Transpose of an empty tensor"};
  const std::vector<std::int64_t> perm = transpose_permutation(graph, node);
  if (perm.empty()) {
    return Failure{fmt::format("Transpose perm is not a permutation of the input's {} axes", rank)};
  }
  TransposeSpec spec{node.input(0), node.outputs[0], {}};
  for (std::int64_t axis : perm) spec.perm.push_back(static_cast<int>(axis));
  Shape expected;
  for (int axis : spec.perm) expected.push_back(type.shape[static_cast<std::size_t>(axis)]);
  if (graph.type(spec.output).shape != expected) {
    return Failure{"Transpose output shape disagrees with its perm"};
  }
  return spec;
}

void emit_transpose(ProgramBuilder& builder, const TransposeSpec& spec) {
  const memory::dims dims = to_dims(builder.shape(spec.input));
  const memory::desc current = builder.desc(spec.input);
  // A value kept as a reshape (a matmul's [1, K] of [K]) is first seen in
  // its own dims.
  const memory source = current.dims() == dims ? builder.read(spec.input, current)
                                               : builder.read_plain(spec.input, dims);
  // permute_axes moves input axis i to position axes[i]; ONNX's perm names,
  // for each output axis, the input axis it takes.
  std::vector<int> axes(spec.perm.size());
  for (std::size_t i = 0; i < spec.perm.size(); ++i) {
    axes[static_cast<std::size_t>(spec.perm[i])] = static_cast<int>(i);
  }
  builder.define(spec.output, builder.view_of(source, source.get_desc().permute_axes(axes)));
}

}  // namespace collage::onednn
