#include "collage/backends/onednn/matmul.h"

#include <fmt/format.h>

#include <algorithm>

#include "collage/backends/onednn/node_checks.h"

namespace collage::onednn {
namespace {

Result<MatMulSpec> plain_matmul_spec(const Graph& graph, const Node& node) {
  if (auto problem = tensor_problem(graph, node, 2)) return Failure{*problem};
  if (node.input(0) == kNoValue || node.input(1) == kNoValue || node.outputs.size() != 1) {
    return Failure{"MatMul needs two inputs and one output"};
  }
  MatMulSpec spec;
  spec.a = node.input(0);
  spec.b = node.input(1);
  spec.output = node.outputs[0];
  const Shape& a = graph.type(spec.a).shape;
  const Shape& b = graph.type(spec.b).shape;
  if (a.empty() || b.empty()) return Failure{"MatMul of a scalar"};
  memory::dims a_dims(a.begin(), a.end());
  memory::dims b_dims(b.begin(), b.end());
  if (a_dims.size() == 1) a_dims.insert(a_dims.begin(), 1);
  if (b_dims.size() == 1) b_dims.push_back(1);
  const int rank = static_cast<int>(std::max(a_dims.size(), b_dims.size()));
  spec.a_dims = align_rank(a_dims, rank);
  spec.b_dims = align_rank(b_dims, rank);
  const auto r = static_cast<std::size_t>(rank);
  if (spec.a_dims[r - 1] != spec.b_dims[r - 2]) return Failure{"MatMul inner dims differ"};
  for (std::size_t i = 0; i + 2 < r; ++i) {
    const memory::dim x = spec.a_dims[i];
    const memory::dim y = spec.b_dims[i];
    if (x != y && x != 1 && y != 1) return Failure{"MatMul batch dims do not broadcast"};
    spec.dst_dims.push_back(std::max(x, y));
  }
  spec.dst_dims.push_back(spec.a_dims[r - 2]);
  spec.dst_dims.push_back(spec.b_dims[r - 1]);
  spec.a_strides = row_major_strides(spec.a_dims);
  spec.b_strides = row_major_strides(spec.b_dims);
  const Shape& y = graph.type(spec.output).shape;
  if (dims_numel(spec.dst_dims) != shape_numel(y)) return Failure{"MatMul output shape disagrees"};
  spec.output_is_dst = to_dims(y) == spec.dst_dims;
  return spec;
}

Result<MatMulSpec> gemm_spec(const Graph& graph, const Node& node) {
  if (auto problem = tensor_problem(graph, node, 3)) return Failure{*problem};
  if (node.input(0) == kNoValue || node.input(1) == kNoValue || node.outputs.size() != 1) {
    return Failure{"Gemm needs A, B and one output"};
  }
  MatMulSpec spec;
  spec.a = node.input(0);
  spec.b = node.input(1);
  spec.c = node.input(2);
  spec.output = node.outputs[0];
  spec.alpha = node.attributes.get_float("alpha", 1.f);
  spec.beta = node.attributes.get_float("beta", 1.f);
  const Shape& a = graph.type(spec.a).shape;
  const Shape& b = graph.type(spec.b).shape;
  if (a.size() != 2 || b.size() != 2) return Failure{"Gemm needs 2-D A and B"};
  const bool trans_a = node.attributes.get_int("transA", 0) != 0;
  const bool trans_b = node.attributes.get_int("transB", 0) != 0;
  const memory::dim m = trans_a ? a[1] : a[0];
  const memory::dim k = trans_a ? a[0] : a[1];
  const memory::dim n = trans_b ? b[0] : b[1];
  if ((trans_b ? b[1] : b[0]) != k) return Failure{"Gemm inner dims differ"};
  // A transposed operand is the same buffer read with swapped strides.
  spec.a_dims = {m, k};
  spec.a_strides = trans_a ? memory::dims{1, m} : memory::dims{k, 1};
  spec.b_dims = {k, n};
  spec.b_strides = trans_b ? memory::dims{1, k} : memory::dims{n, 1};
  spec.dst_dims = {m, n};
  if (to_dims(graph.type(spec.output).shape) != spec.dst_dims) {
    return Failure{"Gemm output shape disagrees"};
  }
  if (spec.c != kNoValue) {
    const Shape& c = graph.type(spec.c).shape;
    const memory::dims c_dims = align_rank(to_dims(c), 2);
    if (c.size() > 2 || (c_dims[0] != 1 && c_dims[0] != m) || (c_dims[1] != 1 && c_dims[1] != n)) {
      return Failure{"Gemm C does not broadcast to [M, N]"};
    }
    if (spec.beta != 1.f && !graph.value(spec.c).is_constant()) {
      return Failure{"Gemm with beta != 1 needs a constant C"};
    }
  }
  return spec;
}

// Whether an operand of `shape`, broadcast to `dst_dims` (rank >= 2), is
// the same after the rows of the result are collapsed into one dimension:
// it is broadcast over all of them or over none.
bool broadcasts_over_all_rows_or_none(const Shape& shape, const memory::dims& dst_dims) {
  const int rank = static_cast<int>(dst_dims.size());
  if (static_cast<int>(shape.size()) > rank) return false;
  const memory::dims dims = align_rank(to_dims(shape), rank);
  const memory::dims rows(dims.begin(), dims.end() - 1);
  const memory::dims dst_rows(dst_dims.begin(), dst_dims.end() - 1);
  return rows == dst_rows || dims_numel(rows) == 1;
}

// Whether `spec` multiplies a batch of matrices by one constant matrix, with
// nothing in `chain` that tells the batch's rows apart (binary operands
// broadcast over all rows or none), so that it can be computed as one tall
// matrix product (collapse_batch).
bool is_batch_times_constant(const ProgramBuilder& builder, const MatMulSpec& spec,
                             const PostOpChain& chain) {
  const std::size_t rank = spec.dst_dims.size();
  if (rank <= 2 || !spec.output_is_dst || !builder.is_constant(spec.b)) return false;
  if (dims_numel(memory::dims(spec.b_dims.begin(), spec.b_dims.end() - 2)) != 1) return false;
  if (spec.a_strides != row_major_strides(spec.a_dims)) return false;
  for (const std::vector<PostOp>& group : chain.groups) {
    for (const PostOp& op : group) {
      if (op.kind == PostOp::Kind::kBinary &&
          !broadcasts_over_all_rows_or_none(builder.shape(op.operand), spec.dst_dims)) {
        return false;
      }
    }
  }
  return true;
}

// `spec` (is_batch_times_constant) as one [rows, K] x [K, N] product: A's
// batch and row dimensions are consecutive in memory, and so are the
// result's.
MatMulSpec collapse_batch(MatMulSpec spec) {
  const std::size_t rank = spec.dst_dims.size();
  const memory::dim k = spec.a_dims[rank - 1];
  const memory::dim n = spec.b_dims[rank - 1];
  const memory::dim rows = dims_numel(spec.a_dims) / k;
  spec.a_dims = {rows, k};
  spec.b_dims = {k, n};
  spec.dst_dims = {rows, n};
  spec.a_strides = row_major_strides(spec.a_dims);
  spec.b_strides = row_major_strides(spec.b_dims);
  return spec;
}

// `tensor` times `factor`, in a new buffer.
Tensor scaled(const Tensor& tensor, float factor) {
  Tensor result = Tensor::allocate(tensor.type());
  const float* src = tensor.data<float>();
  float* dst = result.data<float>();
  for (std::int64_t i = 0; i < tensor.numel(); ++i) dst[i] = src[i] * factor;
  return result;
}

}  // namespace

Result<MatMulSpec> matmul_spec(const Graph& graph, const Node& node) {
  if (!in_onnx_domain(node)) return Failure{"not an ONNX-domain op"};
  if (node.op_type == "MatMul") return plain_matmul_spec(graph, node);
  if (node.op_type == "Gemm") return gemm_spec(graph, node);
  return Failure{fmt::format("{} is not a matmul", node.op_type)};
}

std::size_t emit_matmul(ProgramBuilder& builder, const MatMulSpec& input_spec,
                        const PostOpChain& chain) {
  // oneDNN keeps a constant B plain when it multiplies a batch of matrices,
  // and packs it once into its preferred blocked layout for a single
  // product: ConvNeXt-T's Linear over [1, 7, 7, 3072] took 4.5 ms as 7
  // products of 7 rows and 1.39 ms as one of 49 (docs/onednn.md).
  MatMulSpec spec =
      is_batch_times_constant(builder, input_spec, chain) ? collapse_batch(input_spec) : input_spec;
  const int rank = static_cast<int>(spec.dst_dims.size());
  // Gemm's own scaling and C come first in the post-op chain, fused or not.
  std::vector<PostOp> gemm_ops;
  if (spec.alpha != 1.f) {
    if (builder.is_constant(spec.b)) {
      spec.b = builder.add_constant(scaled(builder.constant(spec.b), spec.alpha));
    } else if (builder.is_constant(spec.a)) {
      spec.a = builder.add_constant(scaled(builder.constant(spec.a), spec.alpha));
    } else {
      gemm_ops.push_back(PostOp::eltwise_op({dnnl::algorithm::eltwise_linear, spec.alpha, 0.f}));
    }
  }
  if (spec.c != kNoValue && spec.beta != 0.f) {
    ValueId c = spec.c;
    if (spec.beta != 1.f) c = builder.add_constant(scaled(builder.constant(c), spec.beta));
    const memory::dims c_dims = align_rank(to_dims(builder.shape(c)), 2);
    // A row vector is exactly oneDNN's bias, unless alpha is still to be
    // applied after the product (the bias would be scaled too).
    if (c_dims == memory::dims{1, spec.dst_dims.back()} && builder.is_constant(c) &&
        gemm_ops.empty() && spec.bias == kNoValue) {
      spec.bias = c;
    } else {
      gemm_ops.push_back(PostOp::binary_op(dnnl::algorithm::binary_add, c));
    }
  }

  memory::dims bias_dims(static_cast<std::size_t>(rank), 1);
  bias_dims.back() = spec.dst_dims.back();
  const memory::desc a_view = strided_desc(spec.a_dims, spec.a_strides);
  const memory::desc b_view = strided_desc(spec.b_dims, spec.b_strides);
  const bool constant_b = builder.is_constant(spec.b);
  const memory::desc dst_md = plain_desc(spec.dst_dims);
  dnnl::matmul::desc desc(a_view, constant_b ? any_desc(spec.b_dims) : b_view,
                          spec.bias != kNoValue ? plain_desc(bias_dims) : memory::desc(), dst_md);
  auto build = [&](const dnnl::primitive_attr& attr) {
    return dnnl::matmul::primitive_desc(desc, attr, builder.engine());
  };

  // Broadcasting against a promoted 1-D result differs from ONNX's: fuse nothing then.
  const PostOpChain fusible = spec.output_is_dst ? chain : PostOpChain{};
  auto [pd, post_ops, fused] = create_fused<dnnl::matmul::primitive_desc>(
      builder, build, gemm_ops, fusible, spec.dst_dims, dst_md);

  const ValueId output = fused > 0 ? chain.outputs[fused - 1] : spec.output;
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, builder.reinterpret(spec.a, a_view)},
      {DNNL_ARG_WEIGHTS, constant_b ? builder.read_view(spec.b, b_view, pd.weights_desc())
                                    : builder.reinterpret(spec.b, b_view)}};
  if (spec.bias != kNoValue) args[DNNL_ARG_BIAS] = builder.read_plain(spec.bias, bias_dims);
  memory dst = post_ops.destination(builder, output, pd.dst_desc(), chain, fused);
  args[DNNL_ARG_DST] = dst;
  post_ops.bind(builder, args, dst);
  builder.add(dnnl::matmul(pd), std::move(args));
  builder.define(output, dst);
  return fused;
}

}  // namespace collage::onednn
