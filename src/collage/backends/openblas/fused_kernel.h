// FusedKernel: the one Kernel type of the openblas backend, and the
// compilation of a partition into it.
//
// A partition this backend runs is a head op (Gemm, MatMul, Conv) followed by
// a chain of Adds and activations, each node reading the previous node's
// result and nothing else reading it: what a single library call with a
// fused epilogue can compute. The kernel runs the head's BLAS products into
// the output buffer, then the epilogue over it. Everything that can be
// decided once (shapes, operand sources, prepacked weights, workspaces,
// thread split) is decided in compile_partition. A kernel owns its
// workspace, so it runs one call at a time.
#pragma once

#include <memory>
#include <vector>

#include "collage/backends/openblas/core_compute.h"
#include "collage/backends/openblas/epilogue.h"
#include "collage/runtime/kernel.h"

namespace collage::openblas {

class FusedKernel : public Kernel {
 public:
  FusedKernel(std::unique_ptr<CoreCompute> core, Epilogue epilogue,
              std::vector<TensorType> input_types, TensorType output_type, int threads);
  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override;

 private:
  std::unique_ptr<CoreCompute> core_;
  Epilogue epilogue_;
  std::vector<TensorType> input_types_;
  TensorType output_type_;
  int threads_;
};

// Whether `node` can follow a head op in a partition: an Add one of whose
// inputs has the output's shape while the other broadcasts to it, or a
// supported activation.
bool can_follow_head(const Graph& graph, const Node& node);

// Compiles `partition` (a standalone Graph, see extract_subgraph) for
// `threads` threads, or says why this backend cannot run it.
Result<std::unique_ptr<Kernel>> compile_partition(const Graph& partition, int threads);

}  // namespace collage::openblas
