#include "collage/backends/registry.h"

#include <fmt/format.h>

#include "collage/backends/native/native_backend.h"
#include "collage/ir/error.h"
#ifdef COLLAGE_HAVE_ONEDNN
#include "collage/backends/onednn/onednn_backend.h"
#endif
#ifdef COLLAGE_HAVE_OPENBLAS
#include "collage/backends/openblas/openblas_backend.h"
#endif
#ifdef COLLAGE_HAVE_XNNPACK
#include "collage/backends/xnnpack/xnnpack_backend.h"
#endif

namespace collage {

const BackendRegistry& BackendRegistry::global() {
  static const BackendRegistry* registry = [] {
    auto* r = new BackendRegistry();
    r->add(make_native_backend());
#ifdef COLLAGE_HAVE_ONEDNN
    r->add(make_onednn_backend());
#endif
#ifdef COLLAGE_HAVE_OPENBLAS
    r->add(make_openblas_backend());
#endif
#ifdef COLLAGE_HAVE_XNNPACK
    r->add(make_xnnpack_backend());
#endif
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
