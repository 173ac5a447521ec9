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

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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
// (NCHW for a 4-D activation), the Kernel contract's default. The others
// apply to 4-D [N,C,H,W] tensors only:
// - channels-last stores it in NHWC order, float32 or 8-bit (quantized
//   values, which int8 kernels compute on in NHWC);
// - blocked-8 and blocked-16 store a float32 tensor as [N, C/b, H, W, b]
//   (oneDNN's nChw8c / nChw16c), for C a multiple of the block b, so the
//   bytes are exactly as many as the plain tensor's.
// Adjacent partitions of backends that compute in one of these layouts
// exchange tensors that way (negotiate_edge_layouts in
// plan/plan_compiler.h), so the conversion happens once where the layout
// family changes instead of at both ends of every boundary.
enum class EdgeLayout { kPlain, kChannelsLast, kBlocked8, kBlocked16 };

// "plain", "channels-last", "blocked-8", "blocked-16".
inline std::string edge_layout_name(EdgeLayout layout) {
  switch (layout) {
    case EdgeLayout::kPlain:
      return "plain";
    case EdgeLayout::kChannelsLast:
      return "channels-last";
    case EdgeLayout::kBlocked8:
      return "blocked-8";
    case EdgeLayout::kBlocked16:
      return "blocked-16";
  }
  return "?";
}

// The layout edge_layout_name() names, or nullopt.
inline std::optional<EdgeLayout> edge_layout_from_name(std::string_view name) {
  for (EdgeLayout layout : {EdgeLayout::kPlain, EdgeLayout::kChannelsLast, EdgeLayout::kBlocked8,
                            EdgeLayout::kBlocked16}) {
    if (edge_layout_name(layout) == name) return layout;
  }
  return std::nullopt;
}

// The channel block of a blocked layout; 0 for the others.
inline int edge_layout_block(EdgeLayout layout) {
  if (layout == EdgeLayout::kBlocked8) return 8;
  if (layout == EdgeLayout::kBlocked16) return 16;
  return 0;
}

// Whether a tensor of `type` can be stored in `layout` (see EdgeLayout).
inline bool edge_layout_fits(EdgeLayout layout, const TensorType& type) {
  if (layout == EdgeLayout::kPlain) return true;
  if (type.shape.size() != 4) return false;
  const bool eight_bit = type.dtype == DType::kInt8 || type.dtype == DType::kUInt8;
  if (layout == EdgeLayout::kChannelsLast) return type.dtype == DType::kFloat32 || eight_bit;
  if (type.dtype != DType::kFloat32) return false;
  const int block = edge_layout_block(layout);
  return type.shape[1] > 0 && type.shape[1] % block == 0;
}

struct CompileOptions {
  // Threads the kernel may use; every backend in a run gets the same number.
  int threads = 1;
  // The layout of each partition input and output, in Graph::inputs() and
  // Graph::outputs() order; empty means all plain. A backend is only given
  // layouts it accepts_edge_layout().
  std::vector<EdgeLayout> input_layouts;
  std::vector<EdgeLayout> output_layouts;
  // The layout to compute in where the backend has a choice (one of its
  // compute_layouts()); unset: the backend's own, edge_layouts().front().
  std::optional<EdgeLayout> compute_layout;
  // Kernels that run the bodies of the partition's control-flow nodes, by
  // node name, in bodies() order (a null entry: the backend compiles that
  // body itself). compile_plan makes them from a plan's PlanBody entries;
  // the native backend, which runs control flow, takes them.
  std::map<std::string, std::vector<std::shared_ptr<Kernel>>> body_kernels;
};

// Why `options`' edge layouts do not fit `partition` (a count that is not
// the number of edges, a non-plain layout on an edge that is not a 4-D
// float32 tensor, a blocked layout whose block does not divide the
// channels), or nothing when they do.
inline std::optional<std::string> edge_layout_problem(const Graph& partition,
                                                      const CompileOptions& options) {
  auto check = [&](const std::vector<EdgeLayout>& layouts, const std::vector<ValueId>& values,
                   const char* role) -> std::optional<std::string> {
    if (layouts.empty()) return std::nullopt;
    if (layouts.size() != values.size()) {
      return std::to_string(layouts.size()) + " " + role + " layouts given for " +
             std::to_string(values.size()) + " " + role + "s";
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
      const TensorType& type = partition.type(values[i]);
      if (!edge_layout_fits(layouts[i], type)) {
        return std::string(role) + " " + std::to_string(i) + " (" + type.to_string() +
               ") cannot be stored " + edge_layout_name(layouts[i]) +
               ": that needs a 4-D float32 tensor (or 8-bit, channels-last)" +
               (edge_layout_block(layouts[i]) != 0 ? " whose channels the block divides" : "");
      }
    }
    return std::nullopt;
  };
  if (auto why = check(options.input_layouts, partition.inputs(), "input")) return why;
  return check(options.output_layouts, partition.outputs(), "output");
}

// Whether a tensor of `type` is exchanged the same in every layout: it is
// not a 4-D float32 or 8-bit tensor, or has one channel or one pixel.
inline bool edge_layout_free(const TensorType& type) {
  if (!edge_layout_fits(EdgeLayout::kChannelsLast, type)) return true;
  return type.shape[1] == 1 || type.shape[2] * type.shape[3] == 1;
}

// A layout conversion as a backend's kernels do it at a partition's edge: a
// 4-D float32 tensor from plain into one of the backend's edge layouts, or
// back. Boundary costs (cost/boundary_costs.h) time it.
class LayoutConversion {
 public:
  virtual ~LayoutConversion() = default;
  // Converts the tensor at `src` into `dst` (a separate buffer of its size),
  // whose elements are of the type the conversion was made for.
  virtual void run(const void* src, void* dst) = 0;
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
  // Whether compile() takes any convex region of supported nodes, with
  // several outputs and outputs also used inside, as one program: the
  // baselines then give the backend maximal regions (search/regions.h), as
  // an execution provider would. Graph runtimes and compilers do; a library
  // says so when its compile() chains its primitives.
  virtual bool compiles_regions() const { return style() != BackendStyle::kLibrary; }

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

  // The edge layouts compile() honours on CompileOptions' edges, the one
  // the backend computes in first; every backend takes plain edges.
  virtual std::vector<EdgeLayout> edge_layouts() const { return {EdgeLayout::kPlain}; }
  bool accepts_edge_layout(EdgeLayout layout) const {
    for (EdgeLayout accepted : edge_layouts()) {
      if (accepted == layout) return true;
    }
    return false;
  }

  // Whether `node` runs on its values stored in `layout` as they arrive
  // (channels-last or blocked; plain: always). A partition whose every node
  // does follows its neighbours' layouts (follows_layouts): it computes in
  // the layout its edges come in, the search charges it no conversion, and
  // a plan hands it its producers' layout and its readers the one it
  // computed in (plan/plan_compiler.h). It takes any edge layout the
  // partition's values fit; the others it converts itself.
  virtual bool runs_in_layout(const Graph& /*graph*/, const Node& /*node*/,
                              EdgeLayout layout) const {
    return layout == EdgeLayout::kPlain;
  }

  // Whether some of its partitions can follow their neighbours' layouts
  // (runs_in_layout true for a non-plain layout): the search then times
  // them in its search layout (backends/search_layout.h).
  virtual bool has_layout_followers() const { return false; }

  // The layout the search measures this backend in (backends/search_layout.h:
  // a backend wrapped for a search in a compute layout); nothing: its own.
  virtual std::optional<EdgeLayout> search_layout() const { return std::nullopt; }

  // Layouts besides its own that the backend can be asked to compute in
  // (CompileOptions::compute_layout): which is faster depends on the model,
  // so the tuner times a plan in each (Plan::compute_layouts).
  virtual std::vector<EdgeLayout> compute_layouts() const { return {}; }

  // The conversion this backend's kernels do where an edge of `type` is
  // plain and they compute in `layout` (into it, or with `to_plain` back out
  // of it), at `threads` threads. nullptr: the backend converts with the
  // tiled transpose of ir/block_transpose.h, which is timed in its stead.
  virtual std::unique_ptr<LayoutConversion> layout_conversion(const TensorType& /*type*/,
                                                              EdgeLayout /*layout*/,
                                                              bool /*to_plain*/,
                                                              int /*threads*/) const {
    return nullptr;
  }

  // Compiles a partition (a standalone Graph, see extract_subgraph). A
  // partition the backend cannot run is a Failure with the reason, never a crash.
  virtual Result<std::unique_ptr<Kernel>> compile(const Graph& partition,
                                                  const CompileOptions& options) const = 0;
};

// The name a measurement of `backend` travels under (to measuring workers
// and fleet jobs) and is cached under: its name, with its search_layout()
// after an '@' ("onednn@blocked-16"; BackendRegistry::find_measured).
inline std::string measured_as(const Backend& backend) {
  const std::optional<EdgeLayout> layout = backend.search_layout();
  return layout ? backend.name() + "@" + edge_layout_name(*layout) : backend.name();
}

// Whether every node of `nodes` (NodeIds of `graph`) runs in `layout` on `backend`.
inline bool nodes_run_in_layout(const Backend& backend, const Graph& graph,
                                const std::vector<NodeId>& nodes, EdgeLayout layout) {
  for (NodeId node : nodes) {
    if (!backend.runs_in_layout(graph, graph.node(node), layout)) return false;
  }
  return true;
}

// Whether every node of `partition` (a partition Graph) runs in `layout` on `backend`.
inline bool partition_runs_in_layout(const Backend& backend, const Graph& partition,
                                     EdgeLayout layout) {
  for (const Node& node : partition.nodes()) {
    if (!backend.runs_in_layout(partition, node, layout)) return false;
  }
  return true;
}

// Whether a partition of `backend` holding `nodes` follows its neighbours'
// layouts (Backend::runs_in_layout): each node runs in channels-last, which
// every 4-D float32 tensor fits. Such a partition is timed with its
// laid-out edges in channels-last.
inline bool follows_layouts(const Backend& backend, const Graph& graph,
                            const std::vector<NodeId>& nodes) {
  return nodes_run_in_layout(backend, graph, nodes, EdgeLayout::kChannelsLast);
}
inline bool follows_layouts(const Backend& backend, const Graph& partition) {
  return partition_runs_in_layout(backend, partition, EdgeLayout::kChannelsLast);
}

// The layout a partition of `backend` is timed with on an edge of `type`:
// the first of its layouts that fits (preferred_edges, cost/measurer.h), as
// a plan hands it over between two of its partitions (agreed_edge_layout):
// the one it computes in, unless a blocked layout's block does not divide
// the channels or the value is 8-bit, which no blocked layout holds.
inline EdgeLayout timed_edge_layout(const Backend& backend, const TensorType& type) {
  if (edge_layout_free(type)) return EdgeLayout::kPlain;
  for (EdgeLayout layout : backend.edge_layouts()) {
    if (edge_layout_fits(layout, type)) return layout;
  }
  return EdgeLayout::kPlain;
}

// The layout a value of `type` that `producer` hands to `readers` is
// exchanged in: the first of the producer's layouts (after `computed_in`,
// the layout it was asked to compute in, when given) that fits and every
// reader takes; plain when there is none or the layout does not matter.
inline EdgeLayout agreed_edge_layout(const Backend& producer,
                                     const std::vector<const Backend*>& readers,
                                     const TensorType& type,
                                     std::optional<EdgeLayout> computed_in = std::nullopt) {
  if (edge_layout_free(type)) return EdgeLayout::kPlain;
  std::vector<EdgeLayout> candidates = producer.edge_layouts();
  if (computed_in) candidates.insert(candidates.begin(), *computed_in);
  for (EdgeLayout layout : candidates) {
    if (layout == EdgeLayout::kPlain || !edge_layout_fits(layout, type)) continue;
    bool every_reader_takes = true;
    for (const Backend* reader : readers) every_reader_takes &= reader->accepts_edge_layout(layout);
    if (every_reader_takes) return layout;
  }
  return EdgeLayout::kPlain;
}

}  // namespace collage
