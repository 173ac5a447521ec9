// Error (declared in the public include/collage/error.h) and the helpers
// that make untrusted text safe to put into its one-line messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "collage/error.h"

namespace collage {

// Untrusted text (a name from a model file, a .npy header, a path) made safe
// to put into a one-line message: in single quotes, with control characters,
// backslashes and quotes escaped (\n, \x1b, \', \\), and cut after
// `max_bytes` bytes (at a UTF-8 character boundary) with "..." after the
// closing quote. Every place where such text enters a message uses it.
std::string quote_untrusted(std::string_view text, std::size_t max_bytes = 160);

// `text` with control characters escaped as quote_untrusted() does, not quoted and
// not cut: the last line of defense that keeps a whole message on one line.
std::string escape_control(std::string_view text);

}  // namespace collage
