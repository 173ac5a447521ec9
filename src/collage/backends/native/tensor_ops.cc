// The tensor op table: elementwise math and logic, shape and type ops, data
// movement and indexing, writing from computed positions, and writing by
// index, gathered from the five files that implement them.
#include <vector>

#include "collage/backends/native/tensor_kernels.h"

namespace collage::native {

std::span<const OpEntry> tensor_ops() {
  static const std::vector<OpEntry> table = [] {
    std::vector<OpEntry> entries;
    for (std::span<const OpEntry> part :
         {elementwise_ops(), shape_ops(), index_ops(), expand_ops(), scatter_ops()}) {
      entries.insert(entries.end(), part.begin(), part.end());
    }
    return entries;
  }();
  return table;
}

}  // namespace collage::native
