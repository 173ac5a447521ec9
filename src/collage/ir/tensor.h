// Tensor: a TensorType plus a dense row-major buffer.
//
// The one tensor type of the project: weights inside a Graph, boundary values
// between partitions, kernel inputs and outputs. Copies share the buffer
// (like a shared_ptr); clone() makes a deep copy. A tensor can borrow memory
// owned by something else (the bytes of a parsed ONNX file, a mapped weights
// file) so that weights are never copied at import. Buffers this class
// allocates are 64-byte aligned; a freed one of kPooledMinBytes or more is
// kept (up to kPoolCapacityBytes in all, the oldest freed first) for the
// next allocation of its size, as an engine's arena keeps its buffers.
#pragma once

#include <cassert>
#include <cstddef>
#include <memory>

#include "collage/ir/tensor_type.h"

namespace collage {

inline constexpr std::size_t kPooledMinBytes = std::size_t{64} << 10;
inline constexpr std::size_t kPoolCapacityBytes = std::size_t{256} << 20;

// Bytes past the end of a buffer Tensor::allocate makes that may be read,
// never written: vectorized kernels (XNNPACK's) load whole vectors past an
// input's last element, and read such a buffer in place.
inline constexpr std::size_t kReadSlackBytes = 64;

class Tensor {
 public:
  Tensor() = default;

  // Bytes of freed buffers kept for reuse.
  static std::size_t pooled_bytes();

  // A new, uninitialized buffer of the type's size, with kReadSlackBytes
  // more that may be read.
  static Tensor allocate(TensorType type);
  // A new buffer filled with zero bytes.
  static Tensor zeros(TensorType type);
  // A view onto `data`, which `owner` keeps alive. The data must not change
  // while the tensor is in use.
  static Tensor borrow(TensorType type, std::shared_ptr<const void> owner, const void* data);
  // A writable view onto `data` (a caller's output buffer), which `owner`
  // (possibly null: the caller's responsibility) keeps alive.
  static Tensor view(TensorType type, std::shared_ptr<const void> owner, void* data);
  // A rank-0 or rank-1 tensor holding the given values (convenient for tests
  // and for small constants made by passes).
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values, Shape shape);

  // True for a default-constructed tensor that holds no buffer.
  bool empty() const { return data_ == nullptr; }
  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  int rank() const { return type_.rank(); }
  std::int64_t numel() const { return type_.numel(); }
  std::size_t byte_size() const { return type_.byte_size(); }
  // Whether kReadSlackBytes past the end may be read: a buffer of
  // allocate(), not a caller's (borrow, view).
  bool readable_past_end() const { return readable_past_end_; }

  void* raw() { return data_; }
  const void* raw() const { return data_; }

  template <typename T>
  T* data() {
    assert(dtype_of<T>() == dtype() && "Tensor::data<T>() with the wrong element type");
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    assert(dtype_of<T>() == dtype() && "Tensor::data<T>() with the wrong element type");
    return static_cast<const T*>(data_);
  }

  // A deep copy in a new buffer.
  Tensor clone() const;
  // The same buffer seen with another shape of equal element count.
  Tensor reshaped(Shape shape) const;
  // Reads element `i` of an integer or bool tensor as int64 (shape inputs,
  // axes, indices); asserts on float tensors.
  std::int64_t int_at(std::int64_t i) const;
  // Reads element `i` of any numeric tensor as double.
  double number_at(std::int64_t i) const;

 private:
  Tensor(TensorType type, std::shared_ptr<const void> owner, void* data,
         bool readable_past_end = false)
      : type_(std::move(type)),
        owner_(std::move(owner)),
        data_(data),
        readable_past_end_(readable_past_end) {}

  TensorType type_;
  std::shared_ptr<const void> owner_;
  void* data_ = nullptr;
  bool readable_past_end_ = false;
};

template <typename T>
Tensor Tensor::from_vector(const std::vector<T>& values, Shape shape) {
  Tensor tensor = allocate(TensorType{dtype_of<T>(), std::move(shape)});
  assert(static_cast<std::int64_t>(values.size()) == tensor.numel() &&
         "Tensor::from_vector: value count does not match the shape");
  std::copy(values.begin(), values.end(), tensor.data<T>());
  return tensor;
}

}  // namespace collage
