// OnednnKernel: a compiled partition that runs a Program on a oneDNN stream.
//
// Each run binds the caller's plain tensors to the program's edge memories
// (no copies), executes the steps in order with the partition's thread
// count, and waits for them. A kernel owns its stream, so kernels of one
// backend can run from different threads; one kernel is not re-entrant (its
// intermediate buffers are its own).
#pragma once

#include <dnnl.hpp>
#include <span>
#include <vector>

#include "collage/backends/onednn/program.h"
#include "collage/runtime/kernel.h"

namespace collage::onednn {

class OnednnKernel final : public Kernel {
 public:
  OnednnKernel(Program program, dnnl::stream stream, std::vector<TensorType> input_types,
               std::vector<TensorType> output_types, int threads);

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override;

 private:
  Program program_;
  dnnl::stream stream_;
  std::vector<TensorType> input_types_;
  std::vector<TensorType> output_types_;
  int threads_;
};

}  // namespace collage::onednn
