// Partial types: how a value's type reads while a model is still being
// imported.
//
// After import every value has a static TensorType. Before that, between the
// passes that build a graph from a model file and the shape inference that
// settles it, some shapes are not known yet: a Reshape's output shape is only
// known once its shape input has been folded into a constant. Rather than
// widen TensorType for a state that never leaves the import, a dimension that
// is not known is stored as kUnknownDim, and a value whose rank is not known
// either has the one-dimensional shape {kUnknownRank}. Passes that need
// concrete shapes (constant folding) skip any value whose type is not static.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "collage/ir/tensor_type.h"

namespace collage {

inline constexpr std::int64_t kUnknownDim = -1;
inline constexpr std::int64_t kUnknownRank = -2;

// A type of which only the element type is known.
inline TensorType unknown_type(DType dtype = DType::kFloat32) {
  return TensorType{dtype, Shape{kUnknownRank}};
}

inline bool has_known_rank(const TensorType& type) {
  return !(type.shape.size() == 1 && type.shape[0] == kUnknownRank);
}

// Every dimension is known.
inline bool is_static(const TensorType& type) {
  return std::all_of(type.shape.begin(), type.shape.end(),
                     [](std::int64_t dim) { return dim >= 0; });
}

// "f32[1,?,224]", or "f32[?rank]" when even the rank is unknown.
inline std::string partial_type_to_string(const TensorType& type) {
  std::string text(dtype_name(type.dtype));
  if (!has_known_rank(type)) return text + "[?rank]";
  text += "[";
  for (std::size_t i = 0; i < type.shape.size(); ++i) {
    if (i > 0) text += ",";
    text += type.shape[i] >= 0 ? std::to_string(type.shape[i]) : "?";
  }
  return text + "]";
}

}  // namespace collage
