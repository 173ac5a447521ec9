// collage::ElementType: the element types an Array (and, inside the
// library, every tensor: ir/dtype.h names it DType) can hold. float32 is the
// compute type of every backend; the integer and bool types carry shapes,
// indices and masks.
#pragma once

#include <cstdint>

namespace collage {

enum class ElementType : std::uint8_t {
  kFloat32,
  kFloat64,
  kFloat16,
  kInt8,
  kUInt8,
  kInt16,
  kInt32,
  kInt64,
  kBool,
};

}  // namespace collage
