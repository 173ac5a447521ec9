// Operand: a float tensor a compiled kernel reads, either one of the
// partition's runtime inputs or a constant captured at compile time.
//
// Partitions mix both freely (a conv's weights are usually initializers, a
// MatMul's right operand may be an activation), so compiled code refers to
// its operands through this one type. `shape` is the shape the kernel uses,
// which may be a reshaped view of the tensor (a conv bias [M] read as
// [M,1,1]); it always has the tensor's element count.
#pragma once

#include <span>

#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::openblas {

struct Operand {
  // Index into the kernel's inputs, or -1 for a constant.
  int input = -1;
  Tensor constant;
  Shape shape;

  bool is_constant() const { return input < 0; }
  const float* data(std::span<const Tensor> inputs) const {
    return is_constant() ? constant.data<float>()
                         : inputs[static_cast<std::size_t>(input)].data<float>();
  }
};

// The operand for `value` of `partition`: its constant, or its position in
// partition.inputs(). Fails for a non-float32 value or one that is neither.
Result<Operand> operand_for(const Graph& partition, ValueId value);

}  // namespace collage::openblas
