// Kernel: a compiled partition, ready to run.
//
// A backend compiles a partition Graph into a Kernel once; the executor then
// runs it many times. Inputs come in the order of the partition's
// Graph::inputs() and outputs in the order of Graph::outputs(), as plain dense
// row-major tensors of exactly the partition's types. Outputs are allocated
// by the caller, but for an output typed TensorType::at_run_time (a shape
// the data decides, ir/runtime_shapes.h): the kernel puts the tensor it
// allocated in its place. Any internal layout (oneDNN's blocked formats, XNNPACK's
// NHWC) is converted inside the kernel, so its measured time includes that.
#pragma once

#include <span>

#include "collage/ir/tensor.h"

namespace collage {

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Runs once. Throws collage::Error only for a broken contract (wrong
  // number or types of tensors); backends validate at compile time.
  virtual void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) = 0;
};

}  // namespace collage
