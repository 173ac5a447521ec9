// DType: the element types a tensor can hold.
//
// The numbering is our own; the ONNX importer maps TensorProto data types
// onto it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "collage/element_type.h"

namespace collage {

// The public API's ElementType (include/collage/element_type.h): one
// numbering inside the library and at its edge, so nothing converts.
using DType = ElementType;

// Bytes per element.
std::size_t dtype_size(DType dtype);

// Short lower-case name: "f32", "i64", "bool", ...
std::string_view dtype_name(DType dtype);

// The inverse of dtype_name; nullopt for an unknown name.
std::optional<DType> dtype_from_name(std::string_view name);

// The DType of a C++ element type (float -> kFloat32, int64_t -> kInt64, ...).
template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() { return DType::kFloat32; }
template <>
constexpr DType dtype_of<double>() { return DType::kFloat64; }
template <>
constexpr DType dtype_of<std::int8_t>() { return DType::kInt8; }
template <>
constexpr DType dtype_of<std::uint8_t>() { return DType::kUInt8; }
template <>
constexpr DType dtype_of<std::int16_t>() { return DType::kInt16; }
template <>
constexpr DType dtype_of<std::int32_t>() { return DType::kInt32; }
template <>
constexpr DType dtype_of<std::int64_t>() { return DType::kInt64; }
template <>
constexpr DType dtype_of<bool>() { return DType::kBool; }

}  // namespace collage
