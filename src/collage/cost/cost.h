// Cost: the estimated run time of a candidate partition, in seconds.
//
// The search adds costs along a path and compares totals, so a Cost is a
// number with a few guarantees: it is never NaN and never negative, and an
// invalid cost (the backend could not compile or run the candidate, or got
// the wrong answer) behaves as +infinity, absorbs anything added to it, and
// keeps the reason so a report can say why a backend was not used. A
// measured cost is the trimmed mean of its samples (runtime/timing.h: what
// a part adds to a plan's median) and keeps the spread of the measurement
// (90th percentile and sample count), which the plan reports beside it.
#pragma once

#include <compare>
#include <cstddef>
#include <string>

namespace collage {

class Cost {
 public:
  // No time at all (host nodes, the start of the search).
  static Cost zero() { return Cost(0.0); }
  // Cannot be used, and why ("onednn: unsupported data type").
  static Cost invalid(std::string reason);
  // Could not be measured this time, and why: the measuring worker crashed
  // or timed out. Such a failure may not happen again (a machine under load,
  // a fixed backend), so it is cached with its cause but retried by a later
  // run, while a deterministic failure (a compile error, wrong outputs)
  // stays cached.
  static Cost transient_invalid(std::string reason);
  // An estimate of `seconds` without measurement statistics.
  static Cost value(double seconds);
  // A measurement: `seconds` (the trimmed mean of `samples` runs) and their
  // 90th percentile.
  static Cost measured(double seconds, double p90_seconds, std::size_t samples);

  bool is_valid() const { return valid_; }
  // An invalid cost from transient_invalid().
  bool is_transient() const { return transient_; }
  // The duration (the trimmed mean when measured); +infinity when invalid.
  double seconds() const;
  // The 90th percentile when measured, else seconds().
  double p90_seconds() const;
  // Number of timed runs behind the cost; 0 when not measured.
  std::size_t samples() const { return samples_; }
  bool is_measured() const { return samples_ > 0; }
  // Why the cost is invalid; empty for a valid cost.
  const std::string& reason() const { return reason_; }

  // Costs of parts run one after the other add: the costs add, 90th
  // percentiles add (an upper bound on the sum's), and the result is no
  // longer a single measurement. Invalid + anything is invalid, with the
  // first reason.
  Cost operator+(const Cost& other) const;
  Cost& operator+=(const Cost& other);

  // Ordered by seconds(); invalid costs are equal to each other and larger
  // than any valid cost.
  friend std::partial_ordering operator<=>(const Cost& a, const Cost& b);
  friend bool operator==(const Cost& a, const Cost& b) { return (a <=> b) == 0; }

  // "1.25 ms", "1.25 ms (p90 1.31 ms, n=20)", "invalid: <reason>".
  std::string to_string() const;

 private:
  explicit Cost(double seconds) : seconds_(seconds), p90_seconds_(seconds) {}

  bool valid_ = true;
  bool transient_ = false;
  double seconds_ = 0.0;
  double p90_seconds_ = 0.0;
  std::size_t samples_ = 0;
  std::string reason_;
};

// A duration in the largest unit that keeps it >= 1: "850 ns", "1.25 ms", "2.10 s".
std::string format_seconds(double seconds);

}  // namespace collage
