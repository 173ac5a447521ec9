// Gemm and MatMul on top of sgemm.
//
// Gemm's optional C broadcasts unidirectionally to [M, N]; a row or column
// vector (or a scalar) becomes a bias added in sgemm's store, a full matrix
// is copied into Y and scaled by beta there. MatMul follows numpy: 1-D
// operands gain and then lose a unit dimension, batch dimensions broadcast.
// When only A is batched, its batch folds into the rows of one large GEMM
// (the common Linear layer on [batch, sequence, features]); otherwise each
// batch entry is its own GEMM, spread across threads when there are enough.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "collage/backends/native/compute_kernels.h"
#include "collage/backends/native/sgemm.h"
#include "collage/ir/error.h"

namespace collage::native {
namespace {

void run_gemm(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
              std::span<Tensor> outputs, int threads) {
  const Tensor& a = inputs[0];
  const Tensor& b = inputs[1];
  const Tensor* c = optional_input(inputs, 2);
  Tensor& y = outputs[0];
  const bool trans_a = node.attributes.get_int("transA", 0) != 0;
  const bool trans_b = node.attributes.get_int("transB", 0) != 0;
  const float alpha = node.attributes.get_float("alpha", 1.0f);
  const float beta = node.attributes.get_float("beta", 1.0f);
  if (a.rank() != 2 || b.rank() != 2 || y.rank() != 2) {
    throw Error("Gemm needs 2-D operands", {.node = node.name});
  }
  const std::int64_t m = y.shape()[0];
  const std::int64_t n = y.shape()[1];
  const std::int64_t k = trans_a ? a.shape()[0] : a.shape()[1];
  const bool a_fits = (trans_a ? a.shape()[1] : a.shape()[0]) == m;
  const bool b_fits =
      (trans_b ? b.shape()[1] : b.shape()[0]) == k && (trans_b ? b.shape()[0] : b.shape()[1]) == n;
  if (!a_fits || !b_fits) {
    throw Error(fmt::format("operands {} and {} do not give {}", a.type().to_string(),
                            b.type().to_string(), y.type().to_string()),
                {.node = node.name});
  }

  SgemmOutput out{y.data<float>(), n, alpha, 0.0f, nullptr, nullptr};
  std::vector<float> bias;
  if (c != nullptr && beta != 0.0f) {
    if (c->rank() > 2) throw Error("C has more than 2 dimensions", {.node = node.name});
    const std::int64_t cm = c->rank() == 2 ? c->shape()[0] : 1;
    const std::int64_t cn = c->rank() >= 1 ? c->shape().back() : 1;
    if ((cm != 1 && cm != m) || (cn != 1 && cn != n)) {
      throw Error(fmt::format("C {} does not broadcast to [{},{}]", c->type().to_string(), m, n),
                  {.node = node.name});
    }
    const float* cd = c->data<float>();
    if (cm == 1) {
      bias.resize(static_cast<std::size_t>(n));
      for (std::int64_t j = 0; j < n; ++j) bias[j] = beta * cd[cn == 1 ? 0 : j];
      out.col_bias = bias.data();
    } else if (cn == 1) {
      bias.resize(static_cast<std::size_t>(m));
      for (std::int64_t i = 0; i < m; ++i) bias[i] = beta * cd[i];
      out.row_bias = bias.data();
    } else {
      std::memcpy(y.raw(), c->raw(), y.byte_size());
      out.beta = beta;
    }
  }
  sgemm(m, n, k, SgemmMatrix{a.data<float>(), a.shape()[1], trans_a},
        SgemmMatrix{b.data<float>(), b.shape()[1], trans_b}, out, threads);
}

bool check_gemm(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || node.outputs.size() != 1) return false;
  if (!is_float32(graph, node.input(0)) || !is_float32(graph, node.input(1))) return false;
  if (!float32_io(graph, node, 3)) return false;
  if (graph.type(node.input(0)).rank() != 2 || graph.type(node.input(1)).rank() != 2) {
    return false;
  }
  if (graph.type(node.outputs[0]).rank() != 2) return false;
  // Gemm before opset 7 had a `broadcast` attribute; without it C had to be full.
  if (node.attributes.has("broadcast")) return false;
  return node.input(2) == kNoValue || graph.type(node.input(2)).rank() <= 2;
}

void run_matmul(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                std::span<Tensor> outputs, int threads) {
  const Tensor& a = inputs[0];
  const Tensor& b = inputs[1];
  Tensor& y = outputs[0];
  if (a.rank() < 1 || b.rank() < 1) throw Error("MatMul of a scalar", {.node = node.name});
  // numpy: a 1-D A is a row vector, a 1-D B a column vector.
  Shape sa = a.shape();
  Shape sb = b.shape();
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  const std::int64_t m = sa[sa.size() - 2];
  const std::int64_t k = sa.back();
  const std::int64_t n = sb.back();
  if (sb[sb.size() - 2] != k) {
    throw Error(fmt::format("inner dimensions of {} and {} differ", a.type().to_string(),
                            b.type().to_string()),
                {.node = node.name});
  }

  // Broadcast batch dimensions, aligned at the right.
  const std::size_t batch_rank = std::max(sa.size(), sb.size()) - 2;
  Shape batch(batch_rank), batch_a(batch_rank, 1), batch_b(batch_rank, 1);
  std::copy(sa.begin(), sa.end() - 2, batch_a.end() - static_cast<std::ptrdiff_t>(sa.size() - 2));
  std::copy(sb.begin(), sb.end() - 2, batch_b.end() - static_cast<std::ptrdiff_t>(sb.size() - 2));
  for (std::size_t d = 0; d < batch_rank; ++d) {
    if (batch_a[d] != batch_b[d] && batch_a[d] != 1 && batch_b[d] != 1) {
      throw Error(fmt::format("batch dimensions of {} and {} do not broadcast",
                              a.type().to_string(), b.type().to_string()),
                  {.node = node.name});
    }
    batch[d] = std::max(batch_a[d], batch_b[d]);
  }
  const std::int64_t batches = shape_numel(batch);
  if (y.numel() != batches * m * n) {
    throw Error(fmt::format("output {} does not match {} x {}", y.type().to_string(),
                            a.type().to_string(), b.type().to_string()),
                {.node = node.name});
  }
  const float* ad = a.data<float>();
  const float* bd = b.data<float>();
  float* yd = y.data<float>();

  if (shape_numel(batch_b) == 1) {
    // B is shared by every batch entry: one GEMM over all rows of A.
    sgemm(batches * m, n, k, SgemmMatrix{ad, k, false}, SgemmMatrix{bd, n, false},
          SgemmOutput{yd, n}, threads);
    return;
  }

  // Matrix strides of each operand along the broadcast batch dimensions.
  std::vector<std::int64_t> stride_a(batch_rank, 0), stride_b(batch_rank, 0);
  std::int64_t run_a = m * k, run_b = k * n;
  for (std::size_t d = batch_rank; d-- > 0;) {
    if (batch_a[d] != 1) stride_a[d] = run_a;
    if (batch_b[d] != 1) stride_b[d] = run_b;
    run_a *= batch_a[d];
    run_b *= batch_b[d];
  }
  auto one_batch = [&](std::int64_t index, int gemm_threads) {
    std::int64_t offset_a = 0, offset_b = 0;
    for (std::size_t d = batch_rank, rest = static_cast<std::size_t>(index); d-- > 0;) {
      const std::size_t i = rest % static_cast<std::size_t>(batch[d]);
      rest /= static_cast<std::size_t>(batch[d]);
      offset_a += static_cast<std::int64_t>(i) * stride_a[d];
      offset_b += static_cast<std::int64_t>(i) * stride_b[d];
    }
    sgemm(m, n, k, SgemmMatrix{ad + offset_a, k, false}, SgemmMatrix{bd + offset_b, n, false},
          SgemmOutput{yd + index * m * n, n}, gemm_threads);
  };
  if (threads > 1 && batches >= threads) {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (std::int64_t index = 0; index < batches; ++index) one_batch(index, 1);
    return;
  }
  for (std::int64_t index = 0; index < batches; ++index) one_batch(index, threads);
}

bool check_matmul(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 2 || node.outputs.size() != 1) return false;
  if (!is_float32(graph, node.input(0)) || !is_float32(graph, node.input(1))) return false;
  if (!float32_io(graph, node, 2)) return false;
  return graph.type(node.input(0)).rank() >= 1 && graph.type(node.input(1)).rank() >= 1;
}

constexpr OpEntry kGemmOps[] = {
    {"Gemm", run_gemm, check_gemm},
    {"MatMul", run_matmul, check_matmul},
};

}  // namespace

std::span<const OpEntry> gemm_ops() { return kGemmOps; }

}  // namespace collage::native
