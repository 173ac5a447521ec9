// Result<T>: a value or the reason there is none.
//
// Used where failure is expected and must not unwind the caller: a backend
// that cannot compile a partition, a measurement that fails. The reason is a
// short sentence a user can read in a report.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace collage {

// The failure half of a Result, so `return Failure{"why"};` converts to any Result<T>.
struct Failure {
  std::string reason;
};

template <typename T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Failure failure) : state_(std::move(failure)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() {
    assert(ok() && "Result::value() on a failure");
    return std::get<T>(state_);
  }
  const T& value() const {
    assert(ok() && "Result::value() on a failure");
    return std::get<T>(state_);
  }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }

  const std::string& error() const {
    assert(!ok() && "Result::error() on a success");
    return std::get<Failure>(state_).reason;
  }

 private:
  std::variant<T, Failure> state_;
};

}  // namespace collage
