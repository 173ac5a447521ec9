// BackendRegistry: the backends this build was compiled with, by name.
//
// Which libraries exist is decided at configure time (CMake finds them or
// not); the registry is the one place that knows, so the rest of the program
// asks it rather than testing build flags.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collage/backends/backend.h"

namespace collage {

class BackendRegistry {
 public:
  // All backends built into this binary, native first, then the backend
  // plugins of $COLLAGE_BACKEND_PLUGINS (paths separated by ':') and those
  // load_plugin() added. Throws Error when a plugin of the environment
  // does not load.
  static const BackendRegistry& global();

  // Loads the backend plugin at `path` into the global registry
  // (backends/plugin_backend.h) and adds its absolute path to
  // $COLLAGE_BACKEND_PLUGINS, so that `collage worker` processes started
  // later load it too. Loading the same file again does nothing. Throws
  // Error naming the file for a plugin that does not load or whose name a
  // backend already has. Not thread-safe: load plugins before tuning.
  static void load_plugin(const std::string& path);

  // nullptr when there is no backend of that name.
  const Backend* find(const std::string& name) const;
  // The backend a measurement names (measured_as()): find(name), or for
  // "name@layout" that backend wrapped to measure in the layout
  // (backends/search_layout.h); nullptr when there is none.
  const Backend* find_measured(const std::string& measured_as) const;
  // Like find, but throws an Error listing the known names.
  const Backend& get(const std::string& name) const;
  // The reference backend, native: it runs every supported op, checks every
  // other backend's outputs and takes what no other backend can run.
  const Backend& native() const { return get("native"); }
  std::vector<const Backend*> all() const;
  std::vector<std::string> names() const;

  void add(std::unique_ptr<Backend> backend);

 private:
  static BackendRegistry& instance();
  void add_plugin(const std::string& path);

  std::vector<std::unique_ptr<Backend>> backends_;
  // The wrapped backends find_measured made, by measured_as().
  mutable std::mutex measured_mutex_;
  mutable std::map<std::string, std::unique_ptr<Backend>> measured_;
  // The absolute paths of the plugins loaded.
  std::vector<std::string> plugin_paths_;
};

}  // namespace collage
