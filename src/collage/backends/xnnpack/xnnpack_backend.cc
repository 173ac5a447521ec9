#include "collage/backends/xnnpack/xnnpack_backend.h"

#include <fmt/format.h>

#include "code_version.h"
#include "collage/backends/xnnpack/op_table.h"
#include "collage/backends/xnnpack/runtime_kernel.h"
#include "collage/backends/xnnpack/subgraph_builder.h"
#include "collage/ir/error.h"

// The library does not report its version; the build reads the package's.
#ifndef COLLAGE_XNNPACK_VERSION
#define COLLAGE_XNNPACK_VERSION "unknown"
#endif

namespace collage {
namespace {

class XnnpackBackend final : public Backend {
 public:
  std::string name() const override { return "xnnpack"; }
  std::string version() const override { return "XNNPACK " COLLAGE_XNNPACK_VERSION; }
  std::string code_version() const override { return COLLAGE_CODE_VERSION; }
  BackendStyle style() const override { return BackendStyle::kGraph; }
  std::vector<EdgeLayout> edge_layouts() const override {
    return {EdgeLayout::kChannelsLast, EdgeLayout::kPlain};
  }

  // A kernel converts a plain edge with tiled transposes over its pool.
  std::unique_ptr<LayoutConversion> layout_conversion(const TensorType& type, EdgeLayout layout,
                                                      bool to_plain, int threads) const override {
    if (layout != EdgeLayout::kChannelsLast || !edge_layout_fits(layout, type)) return nullptr;
    return xnnpack::make_edge_conversion(type, to_plain, threads);
  }

  bool supports(const Graph& graph, const Node& node) const override {
    // An attribute of the wrong kind is the model's error, reported where the
    // model is checked; here it only means "not this backend".
    try {
      return xnnpack::supports_node(graph, node);
    } catch (const Error&) {
      return false;
    }
  }

  std::string report_color() const override { return "#90be6d"; }
  std::string describe_support() const override {
    return fmt::format(
        "float32 nodes and quantized int8/uint8 ones (uint8 beside int8 weights held as int8 "
        "shifted by 128), any "
        "connected region as one XNNPACK runtime (NHWC inside): {}. No Concat or Transpose "
        "(absent from this XNNPACK's subgraph API).",
        xnnpack::describe_ops());
  }

  Result<std::unique_ptr<Kernel>> compile(const Graph& partition,
                                          const CompileOptions& options) const override {
    if (auto failure = xnnpack::initialize_xnnpack()) return Failure{*failure};
    if (partition.num_nodes() == 0) return Failure{"the partition has no nodes"};
    if (auto why = edge_layout_problem(partition, options)) return Failure{*why};
    for (const auto* layouts : {&options.input_layouts, &options.output_layouts}) {
      for (EdgeLayout layout : *layouts) {
        if (!accepts_edge_layout(layout)) {
          return Failure{"XNNPACK does not take " + edge_layout_name(layout) + " edges"};
        }
      }
    }
    for (const Node& node : partition.nodes()) {
      if (!supports(partition, node)) {
        return Failure{fmt::format("XNNPACK cannot run {} '{}'", node.op_type, node.name)};
      }
    }
    std::vector<ValueId> channels_last_edges;
    auto collect = [&](const std::vector<EdgeLayout>& layouts, const std::vector<ValueId>& edges) {
      for (std::size_t i = 0; i < layouts.size() && i < edges.size(); ++i) {
        if (layouts[i] == EdgeLayout::kChannelsLast) channels_last_edges.push_back(edges[i]);
      }
    };
    collect(options.input_layouts, partition.inputs());
    collect(options.output_layouts, partition.outputs());
    auto built = xnnpack::build_subgraph(partition, channels_last_edges);
    if (!built) return Failure{built.error()};
    return xnnpack::make_runtime_kernel(std::move(*built), options);
  }
};

}  // namespace

std::unique_ptr<Backend> make_xnnpack_backend() { return std::make_unique<XnnpackBackend>(); }

}  // namespace collage
