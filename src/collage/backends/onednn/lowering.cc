#include "collage/backends/onednn/lowering.h"

#include <fmt/format.h>

#include "collage/backends/onednn/eltwise.h"
#include "collage/backends/onednn/fusion.h"
#include "collage/backends/onednn/layout.h"
#include "collage/backends/onednn/lowering_error.h"
#include "collage/backends/onednn/node_checks.h"
#include "collage/backends/onednn/op_table.h"
#include "collage/backends/onednn/units.h"

namespace collage::onednn {
namespace {

// Emits `op`'s anchor with as many of its post-op groups as oneDNN fuses
// well; returns how many. The caller emits the rest one by one.
std::size_t emit_anchor(ProgramBuilder& builder, const FusedOp& op) {
  const Graph& graph = builder.graph();
  if (op.anchor.kind == Unit::Kind::kGeluErf) {
    emit_eltwise(builder, op.anchor.inputs[0], op.anchor.output, gelu_erf_steps());
    return 0;
  }
  const Node& node = graph.node(op.anchor.node);
  const OpRow* row = find_op_row(qualified_op_type(node));
  if (row == nullptr) {
    throw LoweringError(fmt::format("oneDNN has no primitive for {} (node '{}')",
                                    qualified_op_type(node), node.name));
  }
  return row->emit(builder, op, node);
}

void emit(ProgramBuilder& builder, const FusedOp& op) {
  const std::size_t first = builder.step_count();
  const std::size_t fused = emit_anchor(builder, op);
  const Graph& graph = builder.graph();
  std::string label;
  std::vector<NodeId> emitted;
  auto add = [&](const Unit& unit) {
    for (NodeId node : unit.nodes) label += (label.empty() ? "" : "+") + graph.node(node).op_type;
    emitted.insert(emitted.end(), unit.nodes.begin(), unit.nodes.end());
  };
  add(op.anchor);
  if (op.bias_add) add(*op.bias_add);
  for (std::size_t i = 0; i < fused; ++i) add(op.post[i].unit);
  builder.label_steps(first, label, graph.node(op.anchor.nodes.front()).name);
  builder.note_emitted(emitted);
  for (std::size_t i = fused; i < op.post.size(); ++i) {
    emit(builder, FusedOp{op.post[i].unit, std::nullopt, kNoValue, {}});
  }
}

}  // namespace

Result<Program> lower_partition(const Graph& partition, const dnnl::engine& engine,
                                const dnnl::stream& stream, const CompileOptions& options) {
  try {
    for (ValueId input : partition.inputs()) {
      if (!onednn_data_type(partition.type(input).dtype)) {
        return Failure{fmt::format("input '{}' is {}, which oneDNN does not compute with",
                                   partition.value(input).name,
                                   dtype_name(partition.type(input).dtype))};
      }
    }
    ProgramBuilder builder(partition, engine, stream, options.input_layouts, options.output_layouts,
                           options.compute_layout);
    for (const FusedOp& op : fuse_units(partition, build_units(partition))) emit(builder, op);
    for (ValueId output : partition.outputs()) {
      if (partition.value(output).producer == kNoNode || !builder.is_defined(output)) {
        return Failure{fmt::format("output '{}' is not computed by a supported node",
                                   partition.value(output).name)};
      }
    }
    return builder.finish();
  } catch (const dnnl::error& e) {
    return Failure{fmt::format("oneDNN: {} (status {})", e.what(), static_cast<int>(e.status))};
  } catch (const LoweringError& e) {
    return Failure{e.what()};
  } catch (const std::exception& e) {
    return Failure{fmt::format("oneDNN lowering: {}", e.what())};
  }
}

}  // namespace collage::onednn
