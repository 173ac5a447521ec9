#include "collage/cost/cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace collage {

Cost Cost::invalid(std::string reason) {
  Cost cost(0.0);
  cost.valid_ = false;
  cost.reason_ = reason.empty() ? "invalid" : std::move(reason);
  return cost;
}

Cost Cost::transient_invalid(std::string reason) {
  Cost cost = invalid(std::move(reason));
  cost.transient_ = true;
  return cost;
}

namespace {

bool is_duration(double seconds) { return std::isfinite(seconds) && seconds >= 0.0; }

}  // namespace

Cost Cost::value(double seconds) {
  // A NaN would poison every sum and comparison of the search. Callers must
  // not pass one; if a release build gets one anyway, the candidate becomes
  // unusable instead of corrupting the search.
  assert(is_duration(seconds) && "Cost::value: seconds must be finite and >= 0 (never NaN)");
  if (!is_duration(seconds)) return invalid(fmt::format("not a duration: {} s", seconds));
  return Cost(seconds);
}

Cost Cost::measured(double seconds, double p90_seconds, std::size_t samples) {
  assert(samples > 0 && "Cost::measured: a measurement has at least one sample");
  assert(is_duration(seconds) && is_duration(p90_seconds) &&
         "Cost::measured: seconds must be finite and >= 0 (never NaN)");
  if (!is_duration(seconds) || !is_duration(p90_seconds)) {
    return invalid(fmt::format("not a duration: {} s, p90 {} s", seconds, p90_seconds));
  }
  Cost cost(seconds);
  // A percentile computed by another method (interpolated, from fewer
  // samples) can land just below the cost; the spread is never negative.
  cost.p90_seconds_ = std::max(p90_seconds, seconds);
  cost.samples_ = samples;
  return cost;
}

double Cost::seconds() const { return valid_ ? seconds_ : std::numeric_limits<double>::infinity(); }

double Cost::p90_seconds() const {
  return valid_ ? p90_seconds_ : std::numeric_limits<double>::infinity();
}

Cost Cost::operator+(const Cost& other) const {
  if (!valid_) return *this;
  if (!other.valid_) return other;
  Cost sum(seconds_ + other.seconds_);
  sum.p90_seconds_ = p90_seconds_ + other.p90_seconds_;
  return sum;
}

Cost& Cost::operator+=(const Cost& other) {
  *this = *this + other;
  return *this;
}

std::partial_ordering operator<=>(const Cost& a, const Cost& b) {
  if (!a.valid_ || !b.valid_) {
    if (a.valid_ == b.valid_) return std::partial_ordering::equivalent;
    return a.valid_ ? std::partial_ordering::less : std::partial_ordering::greater;
  }
  return a.seconds_ <=> b.seconds_;
}

std::string Cost::to_string() const {
  if (!valid_) return "invalid: " + reason_;
  if (!is_measured()) return format_seconds(seconds_);
  return fmt::format("{} (p90 {}, n={})", format_seconds(seconds_), format_seconds(p90_seconds_),
                     samples_);
}

std::string format_seconds(double seconds) {
  if (!std::isfinite(seconds)) return "inf";
  double magnitude = std::fabs(seconds);
  if (magnitude == 0.0) return "0 s";
  if (magnitude < 1e-6) return fmt::format("{:.0f} ns", seconds * 1e9);
  if (magnitude < 1e-3) return fmt::format("{:.2f} us", seconds * 1e6);
  if (magnitude < 1.0) return fmt::format("{:.2f} ms", seconds * 1e3);
  return fmt::format("{:.2f} s", seconds);
}

}  // namespace collage
