// A backend as the search measures it in a compute layout.
//
// oneDNN computes either in the layout its convolutions choose on this
// machine or in another (Backend::compute_layouts, nChw16c on AVX-512),
// and which is faster depends on the model. A plan names the layout its
// backend computes in (Plan::compute_layouts). The search measures its
// candidates in one layout: a backend that computes in it is wrapped so
// that every candidate of it is compiled to compute in that layout and
// timed with its edges in it, and the boundary charges take the layouts the
// plan will hand over. A backend with layout followers (native's pools and
// elementwise chains) is wrapped too: its followers are timed with their
// laid-out edges in that layout, as they run beside oneDNN's partitions.
//
// The wrapper keeps the backend's name (plans name it as usual); its
// measurements travel and are cached under measured_as(), "onednn@blocked-16",
// which BackendRegistry::find_measured resolves in a measuring worker.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collage/backends/backend.h"

namespace collage {

// Whether `backend` can be asked to compute in `layout` (one of its
// compute_layouts()).
bool computes_in(const Backend& backend, EdgeLayout layout);

// Whether a search in `layout` wraps `backend`: it computes in it or has
// layout followers.
bool searched_in_layout(const Backend& backend, EdgeLayout layout);

// `base` measured in `layout`: compile() computes in it where `base` can
// (its compute_layouts()), and edge_layouts() puts it first.
class InSearchLayout final : public Backend {
 public:
  InSearchLayout(const Backend& base, EdgeLayout layout) : base_(base), layout_(layout) {}

  std::string name() const override { return base_.name(); }
  std::string version() const override { return base_.version(); }
  std::string code_version() const override { return base_.code_version(); }
  BackendStyle style() const override { return base_.style(); }
  bool compiles_regions() const override { return base_.compiles_regions(); }
  bool supports(const Graph& graph, const Node& node) const override {
    return base_.supports(graph, node);
  }
  std::vector<NamedPattern> patterns() const override { return base_.patterns(); }
  std::string describe_support() const override { return base_.describe_support(); }
  std::string report_color() const override { return base_.report_color(); }
  std::vector<EdgeLayout> edge_layouts() const override;
  bool runs_in_layout(const Graph& graph, const Node& node, EdgeLayout layout) const override {
    return base_.runs_in_layout(graph, node, layout);
  }
  bool has_layout_followers() const override { return base_.has_layout_followers(); }
  std::optional<EdgeLayout> search_layout() const override { return layout_; }
  std::vector<EdgeLayout> compute_layouts() const override { return base_.compute_layouts(); }
  std::unique_ptr<LayoutConversion> layout_conversion(const TensorType& type, EdgeLayout layout,
                                                      bool to_plain, int threads) const override {
    return base_.layout_conversion(type, layout, to_plain, threads);
  }
  Result<std::unique_ptr<Kernel>> compile(const Graph& partition,
                                          const CompileOptions& options) const override;

 private:
  const Backend& base_;
  EdgeLayout layout_;
};

// `backends` as a search in `layout` measures them: those it wraps
// (searched_in_layout) wrapped, in `owned`, which must outlive the result;
// the others as they are. Without a layout, `backends` unchanged.
std::vector<const Backend*> in_search_layout(const std::vector<const Backend*>& backends,
                                             std::optional<EdgeLayout> layout,
                                             std::vector<std::unique_ptr<Backend>>& owned);

}  // namespace collage
