// Error: the one exception type for bad input (a model file, a plan, a flag).
//
// Bad input is reported, never crashed on. An Error carries where it is about
// (file, node, field) so the command line can print one precise line and exit
// with code 2. Expected failures inside the search (a backend that cannot
// compile a candidate) are not Errors: they are values (see Result, Cost).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace collage {

class Error : public std::runtime_error {
 public:
  // Where the error is about; empty fields are left out of the message.
  struct Where {
    std::string file;
    std::string node;
    std::string field;
  };

  explicit Error(const std::string& message, Where where = {});

  // The message without the location prefix.
  const std::string& message() const { return message_; }
  const Where& where() const { return where_; }

  // A copy of this error with `file` filled in when it was empty; importers
  // use it to add the file name to errors raised deep inside.
  Error in_file(const std::string& file) const;

 private:
  std::string message_;
  Where where_;
};

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
