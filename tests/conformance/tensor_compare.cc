#include "conformance/tensor_compare.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace collage::testing {
namespace {

bool is_floating(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16;
}

// Row-major index of element `flat` in `shape`, as "[i,j,k]".
std::string index_of(const Shape& shape, std::int64_t flat) {
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 0) return "[]";
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return fmt::format("[{}]", fmt::join(index, ","));
}

bool close(double actual, double expected, const Tolerance& tolerance) {
  if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) && std::isnan(actual);
  if (std::isinf(expected) || std::isinf(actual)) return actual == expected;
  return std::abs(actual - expected) <= tolerance.atol + tolerance.rtol * std::abs(expected);
}

}  // namespace

std::optional<std::string> compare_tensors(const Tensor& actual, const Tensor& expected,
                                           const Tolerance& tolerance) {
  if (actual.type() != expected.type()) {
    return fmt::format("got {}, expected {}", actual.type().to_string(),
                       expected.type().to_string());
  }
  if (expected.dtype() == DType::kFloat16) return "float16 outputs cannot be compared";
  bool floating = is_floating(expected.dtype());
  std::int64_t mismatches = 0;
  std::int64_t worst = -1;
  double worst_error = -1;
  for (std::int64_t i = 0; i < expected.numel(); ++i) {
    double a = actual.number_at(i);
    double e = expected.number_at(i);
    bool ok = floating ? close(a, e, tolerance) : a == e;
    if (ok) continue;
    ++mismatches;
    double error = std::isfinite(a - e) ? std::abs(a - e) : std::numeric_limits<double>::infinity();
    if (error > worst_error) {
      worst_error = error;
      worst = i;
    }
  }
  if (mismatches == 0) return std::nullopt;
  return fmt::format("{} of {} elements differ; worst at {}: got {:.8g}, expected {:.8g}",
                     mismatches, expected.numel(), index_of(expected.shape(), worst),
                     actual.number_at(worst), expected.number_at(worst));
}

}  // namespace collage::testing
