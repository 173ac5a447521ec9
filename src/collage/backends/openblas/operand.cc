#include "collage/backends/openblas/operand.h"

#include <algorithm>

namespace collage::openblas {

Result<Operand> operand_for(const Graph& partition, ValueId value) {
  if (value == kNoValue) return Failure{"a required input is missing"};
  const Value& v = partition.value(value);
  if (v.type.dtype != DType::kFloat32) {
    return Failure{"input '" + v.name + "' is " + v.type.to_string() + ", not float32"};
  }
  Operand operand;
  operand.shape = v.type.shape;
  if (v.is_constant()) {
    operand.constant = *v.constant;
    return operand;
  }
  const std::vector<ValueId>& inputs = partition.inputs();
  auto it = std::find(inputs.begin(), inputs.end(), value);
  if (it == inputs.end()) {
    return Failure{"value '" + v.name + "' is neither an input nor a constant of the partition"};
  }
  operand.input = static_cast<int>(it - inputs.begin());
  return operand;
}

}  // namespace collage::openblas
