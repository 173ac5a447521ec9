// libFuzzer target: the Python module's input check (python/array_input.h)
// on arbitrary array descriptions, as numpy could hand them over: any dtype
// kind, item size and byte order, up to 64 dimensions of any int64 sizes and
// strides, against an input of up to 8 dimensions. The check must end in
// collage::Error or accept only an array of the input's shape, but for
// sizes of dimensions the input leaves open.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "array_input.h"
#include "collage/error.h"

namespace {

// Reads the fuzzer's bytes in order; zeros once they run out.
class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  template <typename T>
  T next() {
    T value{};
    const std::size_t n = std::min(sizeof(T), size_ - offset_);
    std::memcpy(&value, data_ + offset_, n);
    offset_ += n;
    return value;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t offset_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Reader in(data, size);
  collage::ValueInfo expected;
  expected.name = "x";
  expected.type = static_cast<collage::ElementType>(in.next<std::uint8_t>() % 9);
  const int expected_rank = in.next<std::uint8_t>() % 9;
  for (int i = 0; i < expected_rank; ++i) expected.dims.push_back(in.next<std::uint8_t>());
  // A bit per dimension: whether the model leaves it open.
  const auto open_bits = in.next<std::uint8_t>();
  if (open_bits != 0) {
    for (int i = 0; i < expected_rank; ++i)
      expected.open_dims.push_back((open_bits >> i) & 1 ? "n" : "");
  }

  collage::python::ArrayDescription array;
  array.kind = in.next<char>();
  array.itemsize = in.next<std::int64_t>();
  array.byteorder = in.next<char>();
  const int rank = in.next<std::uint8_t>() % 65;
  // An odd byte here gives one stride too few.
  const bool short_strides = (in.next<std::uint8_t>() & 1) != 0;
  for (int i = 0; i < rank; ++i) {
    array.shape.push_back(in.next<std::int64_t>());
    if (!(short_strides && i == 0)) array.strides.push_back(in.next<std::int64_t>());
  }
  try {
    collage::python::check_input_array(array, expected);
  } catch (const collage::Error&) {
    return 0;
  }
  // What passes has the model's rank and strides for every dimension, and
  // differs from the model's shape only where it is open, by a size >= 0.
  if (array.strides.size() != array.shape.size() || array.shape.size() != expected.dims.size())
    std::abort();
  for (std::size_t i = 0; i < array.shape.size(); ++i) {
    if (array.shape[i] == expected.dims[i]) continue;
    const bool open = i < expected.open_dims.size() && !expected.open_dims[i].empty();
    if (!open || array.shape[i] < 0) std::abort();
  }
  return 0;
}
