#include "collage/backends/onednn/concat.h"

#include <fmt/format.h>

#include "collage/backends/onednn/node_checks.h"

namespace collage::onednn {

Result<ConcatSpec> concat_spec(const Graph& graph, const Node& node) {
  if (!in_onnx_domain(node) || node.op_type != "Concat") return Failure{"not a Concat"};
  if (node.inputs.empty() || node.outputs.size() != 1) {
    return Failure{"Concat needs inputs and one output"};
  }
  if (auto problem = tensor_problem(graph, node, node.inputs.size())) return Failure{*problem};
  ConcatSpec spec;
  spec.output = node.outputs[0];
  const Shape& y = graph.type(spec.output).shape;
  const auto rank = static_cast<std::int64_t>(y.size());
  if (rank == 0) return Failure{"Concat of scalars"};
  std::int64_t axis = node.attributes.get_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return Failure{"Concat axis out of range"};
  spec.axis = static_cast<int>(axis);
  std::int64_t total = 0;
  for (ValueId input : node.inputs) {
    if (input == kNoValue) return Failure{"Concat with a missing input"};
    const Shape& x = graph.type(input).shape;
    if (static_cast<std::int64_t>(x.size()) != rank) return Failure{"Concat of unequal ranks"};
    for (std::int64_t d = 0; d < rank; ++d) {
      if (d != axis && x[static_cast<std::size_t>(d)] != y[static_cast<std::size_t>(d)]) {
        return Failure{"Concat inputs differ off the axis"};
      }
    }
    total += x[static_cast<std::size_t>(axis)];
    spec.inputs.push_back(input);
  }
  if (spec.inputs.empty() || total != y[static_cast<std::size_t>(axis)]) {
    return Failure{"Concat output does not add up"};
  }
  return spec;
}

void emit_concat(ProgramBuilder& builder, const ConcatSpec& spec) {
  std::vector<memory::desc> sources;
  std::vector<memory> memories;
  for (ValueId input : spec.inputs) {
    const memory::dims dims = to_dims(builder.shape(input));
    const memory::desc current = builder.desc(input);
    // A value held as a reshape (other dims) is read back in plain order.
    memories.push_back(builder.read(input, current.dims() == dims ? current : plain_desc(dims)));
    sources.push_back(memories.back().get_desc());
  }
  dnnl::concat::primitive_desc pd(spec.axis, sources, builder.engine());
  memory dst = builder.output_memory(spec.output, pd.dst_desc());
  std::unordered_map<int, memory> args{{DNNL_ARG_DST, dst}};
  for (std::size_t i = 0; i < memories.size(); ++i) {
    args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = memories[i];
  }
  builder.add(dnnl::concat(pd), std::move(args));
  builder.define(spec.output, dst);
}

}  // namespace collage::onednn
