#include "collage/backends/registry.h"

#include <fmt/format.h>

#include "collage/backends/native/native_backend.h"
#include "collage/ir/error.h"

namespace collage {

std::string style_name(BackendStyle style) {
  switch (style) {
    case BackendStyle::kLibrary: return "library";
    case BackendStyle::kGraph: return "graph";
    case BackendStyle::kCompiler: return "compiler";
  }
  return "?";
}

const BackendRegistry& BackendRegistry::global() {
  static const BackendRegistry* registry = [] {
    auto* r = new BackendRegistry();
    r->add(make_native_backend());
    return r;
  }();
  return *registry;
}

const Backend* BackendRegistry::find(const std::string& name) const {
  for (const auto& backend : backends_) {
    if (backend->name() == name) return backend.get();
  }
  return nullptr;
}

const Backend& BackendRegistry::get(const std::string& name) const {
  if (const Backend* backend = find(name)) return *backend;
  throw Error(fmt::format("unknown backend '{}' (this build has: {})", name,
                          fmt::join(names(), ", ")));
}

std::vector<const Backend*> BackendRegistry::all() const {
  std::vector<const Backend*> result;
  for (const auto& backend : backends_) result.push_back(backend.get());
  return result;
}

std::vector<std::string> BackendRegistry::names() const {
  std::vector<std::string> result;
  for (const auto& backend : backends_) result.push_back(backend->name());
  return result;
}

void BackendRegistry::add(std::unique_ptr<Backend> backend) {
  backends_.push_back(std::move(backend));
}

}  // namespace collage
