#include "collage/backends/native/axis_copy.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "collage/backends/native/broadcast.h"

namespace collage::native {
namespace {

// Whether the inner table reads one contiguous run of the input.
bool is_contiguous(const std::vector<std::int64_t>& table) {
  if (table.empty() || table[0] < 0) return false;
  for (std::size_t j = 1; j < table.size(); ++j) {
    if (table[j] != table[0] + static_cast<std::int64_t>(j)) return false;
  }
  return true;
}

template <typename T>
void copy_rows(const T* in, T* out, const std::vector<std::vector<std::int64_t>>& offsets,
               const T* fill, int threads) {
  const std::size_t rank = offsets.size();
  const std::vector<std::int64_t>& inner_table = offsets.back();
  const auto inner = static_cast<std::int64_t>(inner_table.size());
  std::int64_t rows = 1;
  for (std::size_t d = 0; d + 1 < rank; ++d) rows *= static_cast<std::int64_t>(offsets[d].size());
  if (rows * inner == 0) return;
  const bool contiguous = is_contiguous(inner_table);
  const int team = threads_for(rows * inner, threads);

#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (std::int64_t row = 0; row < rows; ++row) {
    // The row's base: the sum of the outer axes' terms at its coordinate.
    std::int64_t base = 0;
    std::int64_t rest = row;
    for (std::size_t d = rank - 1; d-- > 0;) {
      const auto size = static_cast<std::int64_t>(offsets[d].size());
      base += offsets[d][static_cast<std::size_t>(rest % size)];
      rest /= size;
    }
    T* destination = out + row * inner;
    if (base < 0) {
      std::fill(destination, destination + inner, *fill);
      continue;
    }
    if (contiguous) {
      std::memcpy(destination, in + base + inner_table[0],
                  static_cast<std::size_t>(inner) * sizeof(T));
      continue;
    }
    for (std::int64_t j = 0; j < inner; ++j) {
      const std::int64_t offset = base + inner_table[static_cast<std::size_t>(j)];
      destination[j] = offset < 0 ? *fill : in[offset];
    }
  }
}

template <typename T>
void copy_typed(const void* in, void* out, const std::vector<std::vector<std::int64_t>>& offsets,
                const void* fill, int threads) {
  if (offsets.empty()) {
    *static_cast<T*>(out) = *static_cast<const T*>(in);
    return;
  }
  copy_rows(static_cast<const T*>(in), static_cast<T*>(out), offsets, static_cast<const T*>(fill),
            threads);
}

}  // namespace

void axis_copy(const void* in, void* out, std::size_t element_size,
               const std::vector<std::vector<std::int64_t>>& offsets, const void* fill,
               int threads) {
  // Elements move as opaque words of their size; the dtype does not matter.
  switch (element_size) {
    case 1:
      copy_typed<std::uint8_t>(in, out, offsets, fill, threads);
      return;
    case 2:
      copy_typed<std::uint16_t>(in, out, offsets, fill, threads);
      return;
    case 4:
      copy_typed<std::uint32_t>(in, out, offsets, fill, threads);
      return;
    case 8:
      copy_typed<std::uint64_t>(in, out, offsets, fill, threads);
      return;
    default:
      assert(false && "axis_copy: unsupported element size");
  }
}

}  // namespace collage::native
