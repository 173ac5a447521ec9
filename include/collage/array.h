// collage::Array: a dense, row-major n-dimensional array handed to and
// returned by a Session.
//
// An Array either owns its buffer (allocate(), from_vector(), the outputs a
// Session returns) or is a view onto memory the caller owns (view()): a
// session reads input views in place, without a copy, and writes outputs
// straight into caller views given to Session::run. Copies of an Array share
// its buffer, like a shared_ptr. Buffers an Array allocates are 64-byte
// aligned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "collage/element_type.h"

namespace collage {


// Bytes per element.
std::size_t element_size(ElementType type);
// "float32", "float64", "float16", "int8", "uint8", "int16", "int32", "int64", "bool".
std::string element_type_name(ElementType type);

// The ElementType of a C++ element type (float, double, int8_t, uint8_t,
// int16_t, int32_t, int64_t, bool).
template <typename T>
constexpr ElementType element_type_of();

class Array {
 public:
  // An empty array: no type, no buffer.
  Array() = default;

  // A new, zero-filled buffer.
  static Array allocate(ElementType type, std::vector<std::int64_t> dims);
  // A new buffer holding `values`; their count must match `dims`.
  template <typename T>
  static Array from_vector(const std::vector<T>& values, std::vector<std::int64_t> dims);
  // A view onto `data`, which the caller owns and keeps valid while the
  // array (or a copy of it) is in use. Throws Error for a null `data` or a
  // negative dimension.
  static Array view(ElementType type, std::vector<std::int64_t> dims, void* data);
  template <typename T>
  static Array view(T* data, std::vector<std::int64_t> dims) {
    return view(element_type_of<T>(), std::move(dims), data);
  }
  // A view onto `data` that keeps `owner` alive as long as the array (used
  // for buffers owned by another runtime, such as a numpy array).
  static Array shared(ElementType type, std::vector<std::int64_t> dims, std::shared_ptr<void> owner,
                      void* data);

  bool empty() const { return data_ == nullptr; }
  ElementType type() const { return type_; }
  const std::vector<std::int64_t>& dims() const { return dims_; }
  // Element count (1 for a rank-0 array).
  std::int64_t size() const;
  std::size_t byte_size() const { return static_cast<std::size_t>(size()) * element_size(type_); }

  void* data() { return data_; }
  const void* data() const { return data_; }
  // The buffer as T; throws Error when T is not the element type.
  template <typename T>
  T* data_as();
  template <typename T>
  const T* data_as() const;

  // "float32[1,3,224,224]".
  std::string to_string() const;

 private:
  Array(ElementType type, std::vector<std::int64_t> dims, std::shared_ptr<void> owner, void* data)
      : type_(type), dims_(std::move(dims)), owner_(std::move(owner)), data_(data) {}
  void check_element_type(ElementType wanted) const;
  void check_element_count(std::size_t count) const;

  ElementType type_ = ElementType::kFloat32;
  std::vector<std::int64_t> dims_;
  std::shared_ptr<void> owner_;
  void* data_ = nullptr;
};

// Reads a NumPy .npy file (the element types above, C order). Throws Error
// naming the file.
Array load_npy(const std::string& path);
// Writes `array` as a NumPy .npy file, replacing `path`.
void save_npy(const std::string& path, const Array& array);

// ---- implementation of the templates ----

template <typename T>
constexpr ElementType element_type_of() {
  if constexpr (std::is_same_v<T, float>)
    return ElementType::kFloat32;
  else if constexpr (std::is_same_v<T, double>)
    return ElementType::kFloat64;
  else if constexpr (std::is_same_v<T, std::int8_t>)
    return ElementType::kInt8;
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return ElementType::kUInt8;
  else if constexpr (std::is_same_v<T, std::int16_t>)
    return ElementType::kInt16;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return ElementType::kInt32;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return ElementType::kInt64;
  else if constexpr (std::is_same_v<T, bool>)
    return ElementType::kBool;
  else
    static_assert(sizeof(T) == 0, "no collage::ElementType for this C++ type");
}

template <typename T>
Array Array::from_vector(const std::vector<T>& values, std::vector<std::int64_t> dims) {
  Array array = allocate(element_type_of<T>(), std::move(dims));
  array.check_element_count(values.size());
  T* out = array.data_as<T>();
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return array;
}

template <typename T>
T* Array::data_as() {
  check_element_type(element_type_of<T>());
  return static_cast<T*>(data_);
}

template <typename T>
const T* Array::data_as() const {
  check_element_type(element_type_of<T>());
  return static_cast<const T*>(data_);
}

}  // namespace collage
