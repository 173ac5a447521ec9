#include "collage/ir/tensor.h"

#include <immintrin.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <utility>

namespace collage {
namespace {

constexpr std::size_t kAlignment = 64;

// Large buffers that tensors free are kept for the next allocation of the
// same size. glibc serves a request of 128 KiB or more (the threshold moves
// with what was freed before) with fresh pages from mmap and unmaps them on
// free, so a model output allocated on every run was faulted in page by
// page inside the kernel that wrote it: 0.22 ms of a 4.4 ms BERT run, in the
// processes where the threshold had not moved. Engines keep such buffers
// in an arena; this is the same for buffers of one size at a time.
class BufferPool {
 public:
  // Never destroyed: a tensor may be freed after static destruction began.
  static BufferPool& instance() {
    static auto* pool = new BufferPool();
    return *pool;
  }

  // A kept buffer of exactly `bytes`, the most recently freed; nullptr when none.
  void* take(std::size_t bytes) {
    if (bytes < kPooledMinBytes) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = idle_.rbegin(); it != idle_.rend(); ++it) {
      if (it->first != bytes) continue;
      void* memory = it->second;
      idle_bytes_ -= bytes;
      idle_.erase(std::next(it).base());
      return memory;
    }
    return nullptr;
  }

  // Keeps `memory` for reuse, freeing the oldest kept buffers beyond the
  // capacity; a small buffer goes back to malloc at once.
  void give(void* memory, std::size_t bytes) {
    if (bytes < kPooledMinBytes || bytes > kPoolCapacityBytes) {
      std::free(memory);
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.emplace_back(bytes, memory);
    idle_bytes_ += bytes;
    while (idle_bytes_ > kPoolCapacityBytes) {
      idle_bytes_ -= idle_.front().first;
      std::free(idle_.front().second);
      idle_.pop_front();
    }
  }

  std::size_t idle_bytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return idle_bytes_;
  }

 private:
  std::mutex mutex_;
  std::deque<std::pair<std::size_t, void*>> idle_;  // oldest first
  std::size_t idle_bytes_ = 0;
};

std::shared_ptr<void> aligned_buffer(std::size_t bytes) {
  std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  void* memory = BufferPool::instance().take(rounded);
  if (memory == nullptr) memory = std::aligned_alloc(kAlignment, rounded);
  if (memory == nullptr) throw std::bad_alloc();
  return std::shared_ptr<void>(memory,
                               [rounded](void* p) { BufferPool::instance().give(p, rounded); });
}

}  // namespace

std::size_t Tensor::pooled_bytes() { return BufferPool::instance().idle_bytes(); }

Tensor Tensor::allocate(TensorType type) {
  std::shared_ptr<void> buffer = aligned_buffer(type.byte_size() + kReadSlackBytes);
  void* data = buffer.get();
  return Tensor(std::move(type), std::move(buffer), data, true);
}

Tensor Tensor::zeros(TensorType type) {
  Tensor tensor = allocate(std::move(type));
  std::memset(tensor.raw(), 0, tensor.byte_size());
  return tensor;
}

Tensor Tensor::borrow(TensorType type, std::shared_ptr<const void> owner, const void* data) {
  return Tensor(std::move(type), std::move(owner), const_cast<void*>(data));
}

Tensor Tensor::view(TensorType type, std::shared_ptr<const void> owner, void* data) {
  return Tensor(std::move(type), std::move(owner), data);
}

Tensor Tensor::clone() const {
  Tensor copy = allocate(type_);
  if (byte_size() > 0) std::memcpy(copy.raw(), raw(), byte_size());
  return copy;
}

Tensor Tensor::reshaped(Shape shape) const {
  assert(shape_numel(shape) == numel() && "Tensor::reshaped: element count differs");
  return Tensor(TensorType{dtype(), std::move(shape)}, owner_, data_, readable_past_end_);
}

std::int64_t Tensor::int_at(std::int64_t i) const {
  switch (dtype()) {
    case DType::kInt64:
      return data<std::int64_t>()[i];
    case DType::kInt32:
      return data<std::int32_t>()[i];
    case DType::kInt16:
      return data<std::int16_t>()[i];
    case DType::kInt8:
      return data<std::int8_t>()[i];
    case DType::kUInt8:
      return data<std::uint8_t>()[i];
    case DType::kBool:
      return static_cast<const std::uint8_t*>(raw())[i] != 0;
    default:
      assert(false && "Tensor::int_at on a floating-point tensor");
      return 0;
  }
}

double Tensor::number_at(std::int64_t i) const {
  switch (dtype()) {
    case DType::kFloat32:
      return data<float>()[i];
    case DType::kFloat64:
      return data<double>()[i];
    case DType::kFloat16:
      return _cvtsh_ss(static_cast<const std::uint16_t*>(data_)[i]);
    default:
      return static_cast<double>(int_at(i));
  }
}

}  // namespace collage
