// BatchedGemm: ONNX Gemm and MatMul as row-major sgemm calls.
//
// Both ops are a set of independent matrix products: Gemm is one, with
// optional transposes and alpha; MatMul is one per element of the
// numpy-broadcast batch, with 1-D operands promoted to a row (left) or a
// column (right) and the unit dimension dropped again. OpenBLAS 0.3.21 has
// no batched GEMM, so the batch is a loop over cblas_sgemm, folded into one
// tall product when the right operand is shared by the whole batch (the
// usual [B,S,K] x [K,N] of a transformer), and split across threads, one
// single-threaded sgemm each, when the products are many and small
// (attention heads). Gemm's beta * C is not part of this: the backend adds it
// in the epilogue with the other broadcast operands.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "collage/backends/openblas/core_compute.h"
#include "collage/backends/openblas/operand.h"

namespace collage::openblas {

struct GemmGeometry {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  bool trans_a = false;
  bool trans_b = false;
  float alpha = 1.0f;
  // Leading dimensions of A and B as stored (their row lengths).
  std::int64_t lda = 0;
  std::int64_t ldb = 0;
  // Element offsets of A and B for each product; product i writes the
  // output from i * m * n on.
  std::vector<std::int64_t> a_offsets;
  std::vector<std::int64_t> b_offsets;
  Shape output;
};

// The products of a MatMul node (float32, any ranks, broadcast batch).
Result<GemmGeometry> analyze_matmul(const Graph& graph, const Node& node);
// The product of a Gemm node: alpha * op(A) * op(B), without C.
Result<GemmGeometry> analyze_gemm(const Graph& graph, const Node& node);

class BatchedGemm : public CoreCompute {
 public:
  // Prepacks constant operands (stored transposed ones are transposed once)
  // and chooses the batch strategy for `threads`.
  BatchedGemm(GemmGeometry geometry, Operand a, Operand b, int threads);
  void run(std::span<const Tensor> inputs, float* out) override;

  // For tests: whether the batch became one product, and whether products
  // run in parallel with each other.
  std::size_t products() const { return geometry_.a_offsets.size(); }
  bool batch_parallel() const { return batch_parallel_; }

 private:
  GemmGeometry geometry_;
  Operand a_;
  Operand b_;
  int threads_;
  bool batch_parallel_ = false;
};

}  // namespace collage::openblas
