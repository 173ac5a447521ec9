// Backend: one inference library (oneDNN, OpenBLAS, XNNPACK, our native
// kernels) behind one interface.
//
// A backend says what it can run and compiles a partition into a Kernel.
// What it can run comes in two forms, after TVM Collage's partition rules:
// supports() for single nodes (with predicates on dtype, shape and
// attributes) and patterns() for the multi-op calls a library makes in one
// go (conv+bias+relu). style() tells the partitioner how to grow candidates:
// a library takes single supported nodes and pattern matches, a graph runtime
// takes any connected region of supported nodes, a compiler fuses by kind.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collage/ir/graph.h"
#include "collage/ir/pattern.h"
#include "collage/ir/result.h"
#include "collage/runtime/kernel.h"

namespace collage {

enum class BackendStyle { kLibrary, kGraph, kCompiler };

inline std::string style_name(BackendStyle style) {
  switch (style) {
    case BackendStyle::kLibrary:
      return "library";
    case BackendStyle::kGraph:
      return "graph";
    case BackendStyle::kCompiler:
      return "compiler";
  }
  return "?";
}

// How a tensor at a partition's edge is stored. Plain is dense row-major
// (NCHW for a 4-D activation), the Kernel contract's default. Channels-last
// stores a 4-D [N,C,H,W] tensor in NHWC order: adjacent partitions of
// backends that compute channels-last exchange tensors that way, so the
// conversion happens once where the layout family changes instead of at
// both ends of every boundary.
enum class EdgeLayout { kPlain, kChannelsLast };

struct CompileOptions {
  // Threads the kernel may use; every backend in a run gets the same number.
  int threads = 1;
  // The layout of each partition input and output, in Graph::inputs() and
  // Graph::outputs() order; empty means all plain. Only backends that
  // accept_channels_last_edges() are given anything else.
  std::vector<EdgeLayout> input_layouts;
  std::vector<EdgeLayout> output_layouts;
};

// A named multi-op entry of a library-style backend.
struct NamedPattern {
  std::string name;
  Pattern pattern;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;
  // The library's real version string ("oneDNN 2.6.3"); part of cache keys.
  virtual std::string version() const = 0;
  // A hash of this project's own code of the backend (its source folder and
  // the shared code it builds on), generated at build time; part of cache
  // keys, so that a measurement never outlives the code that was measured.
  // Empty for backends without generated hashes (test doubles).
  virtual std::string code_version() const { return {}; }
  virtual BackendStyle style() const = 0;

  // Whether the backend can run `node` of `graph` on its own, with the
  // node's actual types and attributes. A predicate that claims a case the
  // backend gets wrong is a bug.
  virtual bool supports(const Graph& graph, const Node& node) const = 0;
  // Multi-op entries (library style). Every node of a match must be one the
  // backend can run as part of that entry.
  virtual std::vector<NamedPattern> patterns() const { return {}; }
  // Human-readable list of supported ops and patterns, for `collage backends`.
  virtual std::string describe_support() const = 0;
  // The fill colour of this backend's partitions in plan drawings
  // (`collage show --format dot|svg`), as "#rrggbb".
  virtual std::string report_color() const { return "#ffffff"; }

  // Whether compile() honours CompileOptions' channels-last edge layouts.
  virtual bool accepts_channels_last_edges() const { return false; }

  // Compiles a partition (a standalone Graph, see extract_subgraph). A
  // partition the backend cannot run is a Failure with the reason, never a crash.
  virtual Result<std::unique_ptr<Kernel>> compile(const Graph& partition,
                                                  const CompileOptions& options) const = 0;
};

}  // namespace collage
