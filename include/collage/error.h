// collage::Error: the one exception type of Collage, for bad input (a model
// file, a plan, an option) and for anything else that stops a call.
//
// Its what() is the one-line message the `collage` command line prints after
// "collage: error: ", with where it is about (file, node, field) in front.
// Bad input is reported, never crashed on. Inside the search, expected
// failures (a backend that cannot compile a candidate) are not Errors: they
// make that candidate invalid and the search goes on.
#pragma once

#include <stdexcept>
#include <string>

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

}  // namespace collage
