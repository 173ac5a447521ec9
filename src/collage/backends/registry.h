// BackendRegistry: the backends this build was compiled with, by name.
//
// Which libraries exist is decided at configure time (CMake finds them or
// not); the registry is the one place that knows, so the rest of the program
// asks it rather than testing build flags.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collage/backends/backend.h"

namespace collage {

class BackendRegistry {
 public:
  // All backends built into this binary, native first.
  static const BackendRegistry& global();

  // nullptr when there is no backend of that name.
  const Backend* find(const std::string& name) const;
  // Like find, but throws an Error listing the known names.
  const Backend& get(const std::string& name) const;
  // The reference backend, native: it runs every supported op, checks every
  // other backend's outputs and takes what no other backend can run.
  const Backend& native() const { return get("native"); }
  std::vector<const Backend*> all() const;
  std::vector<std::string> names() const;

  void add(std::unique_ptr<Backend> backend);

 private:
  std::vector<std::unique_ptr<Backend>> backends_;
};

}  // namespace collage
