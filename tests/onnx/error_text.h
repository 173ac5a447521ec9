// The message of the Error a call throws, for tests that check what an error
// names.
#pragma once

#include <string>

#include "collage/ir/error.h"

namespace collage::testing {

// What `f` throws as a collage::Error, or "no error".
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace collage::testing
