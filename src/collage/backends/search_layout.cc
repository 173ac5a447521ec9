#include "collage/backends/search_layout.h"

#include <algorithm>

namespace collage {

bool computes_in(const Backend& backend, EdgeLayout layout) {
  const std::vector<EdgeLayout> computes = backend.compute_layouts();
  return std::find(computes.begin(), computes.end(), layout) != computes.end();
}

bool searched_in_layout(const Backend& backend, EdgeLayout layout) {
  return backend.has_layout_followers() || computes_in(backend, layout);
}

std::vector<EdgeLayout> InSearchLayout::edge_layouts() const {
  std::vector<EdgeLayout> layouts = base_.edge_layouts();
  if (!computes_in(base_, layout_)) return layouts;
  layouts.erase(std::remove(layouts.begin(), layouts.end(), layout_), layouts.end());
  layouts.insert(layouts.begin(), layout_);
  return layouts;
}

Result<std::unique_ptr<Kernel>> InSearchLayout::compile(const Graph& partition,
                                                        const CompileOptions& options) const {
  if (!computes_in(base_, layout_) || options.compute_layout) {
    return base_.compile(partition, options);
  }
  CompileOptions in_layout = options;
  in_layout.compute_layout = layout_;
  return base_.compile(partition, in_layout);
}

std::vector<const Backend*> in_search_layout(const std::vector<const Backend*>& backends,
                                             std::optional<EdgeLayout> layout,
                                             std::vector<std::unique_ptr<Backend>>& owned) {
  if (!layout) return backends;
  std::vector<const Backend*> result;
  for (const Backend* backend : backends) {
    if (searched_in_layout(*backend, *layout)) {
      owned.push_back(std::make_unique<InSearchLayout>(*backend, *layout));
      result.push_back(owned.back().get());
    } else {
      result.push_back(backend);
    }
  }
  return result;
}

}  // namespace collage
