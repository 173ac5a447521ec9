#include "conformance/tensor_compare.h"

#include <fmt/format.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
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

// Element `i` as a double; float16 decoded with the F16C instruction.
double value_at(const Tensor& tensor, std::int64_t i) {
  if (tensor.dtype() != DType::kFloat16) return tensor.number_at(i);
  return _cvtsh_ss(static_cast<const std::uint16_t*>(tensor.raw())[i]);
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
  bool floating = is_floating(expected.dtype());
  // float16 keeps 11 significant bits: a relative difference of one unit in
  // the last place (2^-10) is a rounding, not an error.
  Tolerance within = tolerance;
  if (expected.dtype() == DType::kFloat16) within.rtol = std::max(within.rtol, 1.0 / 1024);
  std::int64_t mismatches = 0;
  std::int64_t worst = -1;
  double worst_error = -1;
  for (std::int64_t i = 0; i < expected.numel(); ++i) {
    double a = value_at(actual, i);
    double e = value_at(expected, i);
    bool ok = floating ? close(a, e, within) : a == e;
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
                     value_at(actual, worst), value_at(expected, worst));
}

}  // namespace collage::testing
