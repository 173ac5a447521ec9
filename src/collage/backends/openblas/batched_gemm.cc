#include "collage/backends/openblas/batched_gemm.h"

#include <cstring>

#include "collage/backends/openblas/blas.h"
#include "collage/ir/error.h"

namespace collage::openblas {
namespace {

// Below this many multiply-adds per product, OpenBLAS's own threading has
// too little work per thread, so products run side by side instead.
constexpr std::int64_t kSmallProduct = std::int64_t{1} << 21;

Result<GemmGeometry> check_sizes(GemmGeometry geometry) {
  for (std::int64_t size : {geometry.m, geometry.n, geometry.k, geometry.lda, geometry.ldb}) {
    if (!fits_blas_int(size) || !fits_blas_int(geometry.m * geometry.n)) {
      return Failure{"matrix dimensions exceed OpenBLAS's 32-bit indices"};
    }
  }
  return geometry;
}

bool is_float(const Graph& graph, ValueId id) {
  return id != kNoValue && graph.type(id).dtype == DType::kFloat32;
}

// Element strides of the batch dims of a dense tensor whose matrices hold
// `matrix` elements, aligned right to `rank` dims; 0 where a dim is broadcast.
std::vector<std::int64_t> batch_strides(const Shape& batch, std::size_t rank, std::int64_t matrix) {
  std::vector<std::int64_t> strides(rank, 0);
  std::int64_t stride = matrix;
  for (std::size_t k = 0; k < batch.size(); ++k) {
    std::size_t j = batch.size() - 1 - k;
    if (batch[j] != 1) strides[rank - 1 - k] = stride;
    stride *= batch[j];
  }
  return strides;
}

// A constant operand's matrices, each transposed once, so that the product
// reads them untransposed.
Tensor transposed_matrices(const Tensor& tensor, std::int64_t rows, std::int64_t cols) {
  Tensor result = Tensor::allocate(tensor.type());
  const std::int64_t matrix = rows * cols;
  const std::int64_t count = matrix == 0 ? 0 : tensor.numel() / matrix;
  for (std::int64_t i = 0; i < count; ++i) {
    transpose(rows, cols, tensor.data<float>() + i * matrix, result.data<float>() + i * matrix);
  }
  return result;
}

}  // namespace

Result<GemmGeometry> analyze_matmul(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 2 || node.outputs.size() != 1) {
    return Failure{"MatMul must have two inputs and one output"};
  }
  if (!is_float(graph, node.input(0)) || !is_float(graph, node.input(1)) ||
      !is_float(graph, node.outputs[0])) {
    return Failure{"MatMul is supported for float32 only"};
  }
  const Shape& a = graph.type(node.input(0)).shape;
  const Shape& b = graph.type(node.input(1)).shape;
  if (a.empty() || b.empty()) return Failure{"MatMul operands must have rank 1 or more"};

  GemmGeometry g;
  const std::size_t ra = a.size();
  const std::size_t rb = b.size();
  g.m = ra == 1 ? 1 : a[ra - 2];
  g.k = a[ra - 1];
  const std::int64_t kb = rb == 1 ? b[0] : b[rb - 2];
  g.n = rb == 1 ? 1 : b[rb - 1];
  if (g.k != kb) {
    return Failure{"MatMul inner dimensions differ: " + shape_to_string(a) + " x " +
                   shape_to_string(b)};
  }
  g.lda = g.k;
  g.ldb = g.n;

  Shape a_batch(a.begin(), a.end() - std::min<std::ptrdiff_t>(2, static_cast<std::ptrdiff_t>(ra)));
  Shape b_batch(b.begin(), b.end() - std::min<std::ptrdiff_t>(2, static_cast<std::ptrdiff_t>(rb)));
  const std::size_t rank = std::max(a_batch.size(), b_batch.size());
  Shape batch(rank, 1);
  for (std::size_t k = 0; k < rank; ++k) {
    std::int64_t da = k < a_batch.size() ? a_batch[a_batch.size() - 1 - k] : 1;
    std::int64_t db = k < b_batch.size() ? b_batch[b_batch.size() - 1 - k] : 1;
    if (da != db && da != 1 && db != 1) {
      return Failure{"MatMul batch dimensions do not broadcast: " + shape_to_string(a) + " x " +
                     shape_to_string(b)};
    }
    batch[rank - 1 - k] = da == 1 ? db : da;
  }

  g.output = batch;
  if (ra > 1) g.output.push_back(g.m);
  if (rb > 1) g.output.push_back(g.n);
  if (g.output != graph.type(node.outputs[0]).shape) {
    return Failure{"MatMul output shape " + shape_to_string(graph.type(node.outputs[0]).shape) +
                   " differs from the computed " + shape_to_string(g.output)};
  }

  const std::vector<std::int64_t> sa = batch_strides(a_batch, rank, g.m * g.k);
  const std::vector<std::int64_t> sb = batch_strides(b_batch, rank, g.k * g.n);
  const std::int64_t count = shape_numel(batch);
  std::vector<std::int64_t> index(rank, 0);
  for (std::int64_t i = 0; i < count; ++i) {
    std::int64_t oa = 0;
    std::int64_t ob = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      oa += index[d] * sa[d];
      ob += index[d] * sb[d];
    }
    g.a_offsets.push_back(oa);
    g.b_offsets.push_back(ob);
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < batch[d]) break;
      index[d] = 0;
    }
  }
  return check_sizes(std::move(g));
}

Result<GemmGeometry> analyze_gemm(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || node.inputs.size() > 3 || node.outputs.size() != 1) {
    return Failure{"Gemm must have two or three inputs and one output"};
  }
  if (!is_float(graph, node.input(0)) || !is_float(graph, node.input(1)) ||
      !is_float(graph, node.outputs[0])) {
    return Failure{"Gemm is supported for float32 only"};
  }
  const Shape& a = graph.type(node.input(0)).shape;
  const Shape& b = graph.type(node.input(1)).shape;
  if (a.size() != 2 || b.size() != 2) return Failure{"Gemm operands must be matrices"};

  GemmGeometry g;
  try {
    g.trans_a = node.attributes.get_int("transA", 0) != 0;
    g.trans_b = node.attributes.get_int("transB", 0) != 0;
    g.alpha = node.attributes.get_float("alpha", 1.0f);
  } catch (const Error& error) {
    return Failure{std::string("Gemm: ") + error.what()};
  }
  g.m = g.trans_a ? a[1] : a[0];
  g.k = g.trans_a ? a[0] : a[1];
  const std::int64_t kb = g.trans_b ? b[1] : b[0];
  g.n = g.trans_b ? b[0] : b[1];
  if (g.k != kb) {
    return Failure{"Gemm inner dimensions differ: " + shape_to_string(a) + " x " +
                   shape_to_string(b)};
  }
  g.lda = a[1];
  g.ldb = b[1];
  g.a_offsets = {0};
  g.b_offsets = {0};
  g.output = {g.m, g.n};
  if (g.output != graph.type(node.outputs[0]).shape) {
    return Failure{"Gemm output shape " + shape_to_string(graph.type(node.outputs[0]).shape) +
                   " differs from the computed " + shape_to_string(g.output)};
  }
  return check_sizes(std::move(g));
}

BatchedGemm::BatchedGemm(GemmGeometry geometry, Operand a, Operand b, int threads)
    : geometry_(std::move(geometry)), a_(std::move(a)), b_(std::move(b)), threads_(threads) {
  GemmGeometry& g = geometry_;
  if (a_.is_constant() && g.trans_a) {
    a_.constant = transposed_matrices(a_.constant, g.k, g.m);
    g.trans_a = false;
    g.lda = g.k;
  }
  // A single-row product is a matrix-vector product, which reads B in either layout.
  if (b_.is_constant() && g.trans_b && g.m != 1) {
    b_.constant = transposed_matrices(b_.constant, g.n, g.k);
    g.trans_b = false;
    g.ldb = g.n;
  }

  // One tall product when every batch element shares B and A's matrices lie
  // back to back: [B*M, K] x [K, N] writes exactly the batched output.
  const std::size_t count = g.a_offsets.size();
  bool foldable = count > 1 && !g.trans_a;
  for (std::size_t i = 0; i < count && foldable; ++i) {
    foldable = g.b_offsets[i] == g.b_offsets[0] &&
               g.a_offsets[i] == static_cast<std::int64_t>(i) * g.m * g.k;
  }
  if (foldable && fits_blas_int(g.m * static_cast<std::int64_t>(count) * g.n)) {
    g.m *= static_cast<std::int64_t>(count);
    g.a_offsets = {0};
    g.b_offsets = {g.b_offsets[0]};
  }

  const auto products = static_cast<std::int64_t>(g.a_offsets.size());
  batch_parallel_ = threads_ > 1 && products >= threads_ &&
                    (products % threads_ == 0 || g.m * g.n * g.k <= kSmallProduct);
}

void BatchedGemm::run(std::span<const Tensor> inputs, float* out) {
  const GemmGeometry& g = geometry_;
  const std::int64_t matrix = g.m * g.n;
  const auto products = static_cast<std::int64_t>(g.a_offsets.size());
  if (matrix == 0 || products == 0) return;
  if (g.k == 0) {
    std::memset(out, 0, static_cast<std::size_t>(matrix * products) * sizeof(float));
    return;
  }
  const float* a = a_.data(inputs);
  const float* b = b_.data(inputs);
  auto product = [&](std::int64_t i) {
    const auto index = static_cast<std::size_t>(i);
    const float* ai = a + g.a_offsets[index];
    const float* bi = b + g.b_offsets[index];
    float* yi = out + i * matrix;
    if (g.m == 1) {
      // y = alpha * op(B)^T a; a's K elements are contiguous in either layout (lda is 1 when
      // A is a stored column).
      if (g.trans_b) {
        sgemv(false, g.n, g.k, g.alpha, bi, g.ldb, ai, 1, 0.0f, yi, 1);
      } else {
        sgemv(true, g.k, g.n, g.alpha, bi, g.ldb, ai, 1, 0.0f, yi, 1);
      }
      return;
    }
    if (g.n == 1) {
      // y = alpha * op(A) b; likewise b's K elements are contiguous.
      if (g.trans_a) {
        sgemv(true, g.k, g.m, g.alpha, ai, g.lda, bi, 1, 0.0f, yi, 1);
      } else {
        sgemv(false, g.m, g.k, g.alpha, ai, g.lda, bi, 1, 0.0f, yi, 1);
      }
      return;
    }
    sgemm(g.trans_a, g.trans_b, g.m, g.n, g.k, g.alpha, ai, g.lda, bi, g.ldb, 0.0f, yi, g.n);
  };
  if (batch_parallel_) {
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (std::int64_t i = 0; i < products; ++i) product(i);
    return;
  }
  for (std::int64_t i = 0; i < products; ++i) product(i);
}

}  // namespace collage::openblas
