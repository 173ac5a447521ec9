// LoweringError: the reason a partition cannot become oneDNN primitives.
//
// Lowering is a deep call chain (fusion, layout, per-primitive builders);
// instead of threading a Result through every step, builders throw this and
// compile() turns it, like a dnnl::error, into a Failure with the reason.
// It never escapes the backend.
#pragma once

#include <stdexcept>
#include <utility>

#include "collage/ir/result.h"

namespace collage::onednn {

class LoweringError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The value of `result`, or a LoweringError with its reason.
template <typename T>
T require(Result<T> result) {
  if (!result) throw LoweringError(result.error());
  return std::move(result.value());
}

}  // namespace collage::onednn
