// A backend for tests of layout negotiation and boundary charges: it only
// answers the questions they ask (its name and the edge layouts it
// exchanges values in); it compiles nothing. Subclasses say which of their
// nodes run in which layouts (Backend::runs_in_layout).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collage/backends/backend.h"

namespace collage::testing {

class LayoutBackend : public Backend {
 public:
  LayoutBackend(std::string name, std::vector<EdgeLayout> layouts)
      : name_(std::move(name)), layouts_(std::move(layouts)) {}
  std::string name() const override { return name_; }
  std::string version() const override { return "test"; }
  BackendStyle style() const override { return BackendStyle::kGraph; }
  bool supports(const Graph&, const Node&) const override { return true; }
  std::string describe_support() const override { return "everything"; }
  std::vector<EdgeLayout> edge_layouts() const override { return layouts_; }
  Result<std::unique_ptr<Kernel>> compile(const Graph&, const CompileOptions&) const override {
    return Failure{"not a real backend"};
  }

 private:
  std::string name_;
  std::vector<EdgeLayout> layouts_;
};

}  // namespace collage::testing
