#include "collage/backends/onednn/binary.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "collage/backends/onednn/layout.h"
#include "collage/backends/onednn/node_checks.h"

namespace collage::onednn {
namespace {

using dnnl::algorithm;

constexpr std::array<std::pair<std::string_view, algorithm>, 6> kBinaryOps = {{
    {"Add", algorithm::binary_add},
    {"Sub", algorithm::binary_sub},
    {"Mul", algorithm::binary_mul},
    {"Div", algorithm::binary_div},
    {"Max", algorithm::binary_max},
    {"Min", algorithm::binary_min},
}};

}  // namespace

std::optional<dnnl::algorithm> binary_algorithm(std::string_view op_type) {
  for (const auto& [name, alg] : kBinaryOps) {
    if (name == op_type) return alg;
  }
  return std::nullopt;
}

bool is_commutative(std::string_view op_type) {
  return op_type == "Add" || op_type == "Mul" || op_type == "Max" || op_type == "Min";
}

std::vector<std::string> binary_ops() {
  std::vector<std::string> names;
  names.reserve(kBinaryOps.size());
  for (const auto& entry : kBinaryOps) names.emplace_back(entry.first);
  return names;
}

Result<BinarySpec> binary_spec(const Graph& graph, const Node& node) {
  std::optional<algorithm> alg = binary_algorithm(node.op_type);
  if (!alg || !in_onnx_domain(node))
    return Failure{fmt::format("{} is not a binary op", node.op_type)};
  if (node.inputs.size() != 2 || node.input(0) == kNoValue || node.input(1) == kNoValue ||
      node.outputs.size() != 1) {
    return Failure{fmt::format("{} must have two inputs and one output", node.op_type)};
  }
  if (auto problem = tensor_problem(graph, node, 2)) return Failure{*problem};
  const Shape& out = graph.type(node.outputs[0]).shape;
  const int rank = std::max(1, static_cast<int>(out.size()));
  const memory::dims out_dims = to_dims(out);
  auto full = [&](ValueId value) {
    return align_rank(to_dims(graph.type(value).shape), rank) == out_dims;
  };
  BinarySpec spec{*alg, node.input(0), node.input(1), node.outputs[0]};
  if (!full(spec.src0)) {
    if (!is_commutative(node.op_type) || !full(spec.src1)) {
      return Failure{fmt::format("{} broadcasts its first input; oneDNN broadcasts only the second",
                                 node.op_type)};
    }
    std::swap(spec.src0, spec.src1);
  }
  const memory::dims src1_dims = align_rank(to_dims(graph.type(spec.src1).shape), rank);
  for (std::size_t i = 0; i < src1_dims.size(); ++i) {
    if (src1_dims[i] != 1 && src1_dims[i] != out_dims[i]) {
      return Failure{fmt::format("{} inputs do not broadcast to the output", node.op_type)};
    }
  }
  return spec;
}

namespace {

// Whether oneDNN runs `alg` over these sources with its reference kernel
// (or not at all).
bool runs_reference(const dnnl::engine& engine, algorithm alg, const memory::desc& src0,
                    const memory::desc& src1) {
  try {
    return is_reference_impl(
        dnnl::binary::primitive_desc(dnnl::binary::desc(alg, src0, src1, src0), engine));
  } catch (const dnnl::error&) {
    return true;
  }
}

}  // namespace

memory::desc broadcast_operand_desc(const dnnl::engine& engine, algorithm alg,
                                    const memory::desc& layout0, const memory::dims& src1_dims,
                                    memory::data_type type) {
  const memory::desc plain = plain_desc(src1_dims, type);
  if (src1_dims.size() != 4 || !laid_out_edge_layout(layout0)) return plain;
  const memory::desc same = layout_like(layout0, src1_dims, type);
  if (runs_reference(engine, alg, layout0, plain) && !runs_reference(engine, alg, layout0, same)) {
    return same;
  }
  return plain;
}

std::size_t emit_binary(ProgramBuilder& builder, const BinarySpec& spec, const PostOpChain& chain) {
  const memory::dims out_dims = to_dims(builder.shape(spec.output));
  const memory::desc current = builder.desc(spec.src0);
  // Keep src0's layout (it may be blocked); the result takes the same one.
  const memory::desc layout0 = current.dims() == out_dims ? current : plain_desc(out_dims);
  const memory::dims src1_dims =
      align_rank(to_dims(builder.shape(spec.src1)), static_cast<int>(out_dims.size()));
  const memory::desc layout1 =
      src1_dims == out_dims
          ? layout0
          : broadcast_operand_desc(builder.engine(), spec.algorithm, layout0, src1_dims);

  dnnl::binary::desc desc(spec.algorithm, layout0, layout1, layout0);
  auto build = [&](const dnnl::primitive_attr& attr) {
    return dnnl::binary::primitive_desc(desc, attr, builder.engine());
  };
  auto [pd, post_ops, fused] =
      create_fused<dnnl::binary::primitive_desc>(builder, build, {}, chain, out_dims, layout0);

  const ValueId output = fused > 0 ? chain.outputs[fused - 1] : spec.output;
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC_0, builder.read(spec.src0, layout0)},
                                       {DNNL_ARG_SRC_1, builder.read(spec.src1, layout1)}};
  memory dst = builder.output_memory(output, pd.dst_desc());
  args[DNNL_ARG_DST] = dst;
  post_ops.bind(builder, args, dst);
  builder.add(dnnl::binary(pd), std::move(args));
  builder.define(output, dst);
  return fused;
}

}  // namespace collage::onednn
