// TensorType: an element type and a static shape.
//
// Every value in a Graph has one. Dynamic dimensions are fixed at import time
// (from the model or from --input-shape), so all shapes here are concrete,
// but for the values whose shape depends on the data (NonZero's output, the
// boxes NonMaxSuppression keeps): those are computed by a runtime-shaped
// region (ir/runtime_shapes.h) and marked `at_run_time`, with 0 for each
// dimension known only then.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collage/ir/dtype.h"
#include "collage/ir/error.h"

namespace collage {

using Shape = std::vector<std::int64_t>;

struct TensorType {
  DType dtype = DType::kFloat32;
  Shape shape;
  // The shape is known only when the model runs: `shape` is a placeholder
  // (0 where a dimension is unknown, so sizes computed from it stay 0), and
  // the value's producer allocates its tensor at run time.
  bool at_run_time = false;

  int rank() const { return static_cast<int>(shape.size()); }
  // Number of elements; 1 for a scalar (rank 0). Throws Error when it does
  // not fit in int64 (see checked_numel).
  std::int64_t numel() const;
  // Bytes of the elements. Throws Error when they do not fit in int64.
  std::size_t byte_size() const;
  // "f32[1,3,224,224]"; "f32[?,4]" for a shape known at run time.
  std::string to_string() const;

  friend bool operator==(const TensorType&, const TensorType&) = default;
};

// Number of elements of a shape; 1 for rank 0. Throws Error naming the shape
// when the product does not fit in int64: a shape read from a file such as
// [2^62, 4] must never wrap around to a small count (and a small buffer).
std::int64_t shape_numel(const Shape& shape);

// The number of elements, or nullopt when the product overflows int64.
// Partial shapes (negative unknown dimensions) multiply as they are.
std::optional<std::int64_t> checked_numel(const Shape& shape);

// The byte size of a tensor of this type, or nullopt when it overflows
// int64 (and so may not fit size_t or an allocation either).
std::optional<std::int64_t> checked_byte_size(const TensorType& type);

// Throws Error at `where` when a tensor of `type` cannot exist: its element
// count or byte size overflows int64. Called where shapes enter the program
// (model files, flags, .npy headers, shape inference), so that later size
// arithmetic cannot wrap around.
void check_byte_size(const TensorType& type, const Error::Where& where);

// "[1,3,224,224]"
std::string shape_to_string(const Shape& shape);
// "x=[1,3,320,320] mask=[1,16]": shapes by value name, in name order (names
// as the model spells them: escape the text before printing it).
std::string shapes_to_string(const std::map<std::string, Shape>& shapes);

}  // namespace collage
