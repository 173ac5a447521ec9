// TensorType: an element type and a static shape.
//
// Every value in a Graph has one. Dynamic dimensions are fixed at import time
// (from the model or from --input-shape), so all shapes here are concrete.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collage/ir/dtype.h"

namespace collage {

using Shape = std::vector<std::int64_t>;

struct TensorType {
  DType dtype = DType::kFloat32;
  Shape shape;

  int rank() const { return static_cast<int>(shape.size()); }
  // Number of elements; 1 for a scalar (rank 0).
  std::int64_t numel() const;
  std::size_t byte_size() const;
  // "f32[1,3,224,224]"
  std::string to_string() const;

  friend bool operator==(const TensorType&, const TensorType&) = default;
};

// Number of elements of a shape; 1 for rank 0.
std::int64_t shape_numel(const Shape& shape);

// "[1,3,224,224]"
std::string shape_to_string(const Shape& shape);

}  // namespace collage
