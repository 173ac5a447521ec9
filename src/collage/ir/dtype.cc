#include "collage/ir/dtype.h"

#include <array>
#include <utility>

namespace collage {
namespace {

struct DTypeInfo {
  DType dtype;
  std::size_t size;
  std::string_view name;
};

constexpr std::array<DTypeInfo, 9> kDTypes = {{
    {DType::kFloat32, 4, "f32"},
    {DType::kFloat64, 8, "f64"},
    {DType::kFloat16, 2, "f16"},
    {DType::kInt8, 1, "i8"},
    {DType::kUInt8, 1, "u8"},
    {DType::kInt16, 2, "i16"},
    {DType::kInt32, 4, "i32"},
    {DType::kInt64, 8, "i64"},
    {DType::kBool, 1, "bool"},
}};

const DTypeInfo& info(DType dtype) { return kDTypes[static_cast<std::size_t>(dtype)]; }

}  // namespace

std::size_t dtype_size(DType dtype) { return info(dtype).size; }

std::string_view dtype_name(DType dtype) { return info(dtype).name; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const DTypeInfo& entry : kDTypes) {
    if (entry.name == name) return entry.dtype;
  }
  return std::nullopt;
}

}  // namespace collage
