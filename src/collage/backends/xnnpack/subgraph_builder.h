// SubgraphBuilder: translates a partition Graph into one XNNPACK subgraph.
//
// Every node becomes one or a few XNNPACK subgraph nodes, over values stored
// in the layouts of a LayoutPlan. The builder walks the partition and hands
// each node to the emitter its op table row names (op_table.h, emitters.h);
// it owns what the emitters share: the values defined so far and the layout
// each is stored in, the partition's edges, and the helpers that define
// values and read them in a layout. Weights are re-laid out once by the
// emitters (OIHW to OHWI, depthwise filters to 1HWO, MatMul's [K,N] to
// [N,K]) and inference BatchNormalization is folded into the convolution
// that feeds it; a MatMul followed by the addition of a bias vector becomes
// one fully connected node. The result holds the subgraph, the buffers its
// static values point to (which must outlive every runtime made from it)
// and, for each partition input and output, the XNNPACK external value and
// the layout it is staged in. 8-bit values are qint8 or quint8 at the
// quantization plan_quantization gives them (quantized.h). Any node or
// parameter XNNPACK rejects makes the whole build a Failure.
#pragma once

#include <xnnpack.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collage/backends/xnnpack/channels_last.h"
#include "collage/backends/xnnpack/layout_plan.h"
#include "collage/backends/xnnpack/quantized.h"
#include "collage/backends/xnnpack/window_2d.h"
#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::xnnpack {

struct SubgraphDeleter {
  void operator()(xnn_subgraph* subgraph) const { xnn_delete_subgraph(subgraph); }
};
using SubgraphHandle = std::unique_ptr<xnn_subgraph, SubgraphDeleter>;

// A partition input or output as XNNPACK sees it.
struct ExternalValue {
  std::uint32_t id = XNN_INVALID_VALUE_ID;
  TensorType type;  // the logical (ONNX) type
  Layout layout = Layout::kPlain;
  // A uint8 value, held as int8 shifted by 128: its bytes flip sign bits at the edge.
  bool shifted = false;
};

struct BuiltSubgraph {
  SubgraphHandle subgraph;
  std::vector<ExternalValue> inputs;   // in partition.inputs() order
  std::vector<ExternalValue> outputs;  // in partition.outputs() order
  // Data of static values (weights, broadcast constants, channel scales),
  // padded by XNN_EXTRA_BYTES. Moving the outer vector keeps the inner
  // buffers in place.
  std::vector<std::vector<std::byte>> static_data;
};

// "invalid parameter", "out of memory", ...: for failure reasons.
const char* status_name(xnn_status status);

// Builds the subgraph of `partition`, whose nodes must all be supported
// (supports_node), keeping the values of `channels_last_edges` (partition
// inputs and outputs the caller stores channels-last) channels-last where the
// ops allow either. XNNPACK must be initialized.
Result<BuiltSubgraph> build_subgraph(const Graph& partition,
                                     const std::vector<ValueId>& channels_last_edges = {});

// The dimensions of an XNNPACK value.
using Dims = std::vector<std::size_t>;

// No value: XNNPACK's id for "none" (an absent bias), and what the builder's
// helpers return when XNNPACK refused (the failure is then recorded).
inline constexpr std::uint32_t kInvalidId = XNN_INVALID_VALUE_ID;
// The output bounds of an unclamped op.
inline constexpr float kNoMin = -std::numeric_limits<float>::infinity();
inline constexpr float kNoMax = std::numeric_limits<float>::infinity();

// xnn_define_add2, xnn_define_multiply2, ...: c = clamp(a <op> b, min, max).
using BinaryDefine = xnn_status (*)(xnn_subgraph_t subgraph, float output_min, float output_max,
                                    std::uint32_t input1_id, std::uint32_t input2_id,
                                    std::uint32_t output_id, std::uint32_t flags);

class SubgraphBuilder {
 public:
  // Input 0 and output 0 of an op that reads one activation, in the one
  // layout the op runs in.
  struct Io {
    std::uint32_t x = kInvalidId;
    std::uint32_t y = kInvalidId;
    Layout layout = Layout::kPlain;
  };

  SubgraphBuilder(const Graph& graph, const LayoutPlan& plan);

  Result<BuiltSubgraph> build();

  const Graph& graph() const { return graph_; }
  const LayoutPlan& plan() const { return plan_; }
  const Shape& shape(ValueId value) const { return graph_.type(value).shape; }
  xnn_subgraph_t subgraph() const { return result_.subgraph.get(); }
  // The layout `value` is stored in; for a computed value, once defined.
  Layout stored_layout(ValueId value) const {
    return slots_[static_cast<std::size_t>(value)].layout;
  }
  // The node folded into the one being emitted (a BatchNormalization into
  // its Conv, a bias Add into its MatMul), whose output the emitter computes
  // instead; nullptr when none.
  const Node* folded_node() const;

  // What every emitter of a one-activation op starts with: `in` read in
  // `layout` and `out` defined in it; nullopt when either fails.
  std::optional<Io> bind_io(ValueId in, ValueId out, Layout layout);
  // Input 0 and output 0 of `node`, in `layout`.
  std::optional<Io> bind_io(const Node& node, Layout layout) {
    return bind_io(node.inputs[0], node.outputs[0], layout);
  }
  // Input 0 and output 0 of `node`, whose output follows its input's layout.
  std::optional<Io> bind_io(const Node& node) {
    return bind_io(node, follow_layout(node.inputs[0], node.outputs[0]));
  }
  // The layout of an op whose output follows its input's layout.
  Layout follow_layout(ValueId in, ValueId out) const;

  // Each helper below returns the new value's id, or kInvalidId with the
  // failure recorded.
  // `value`, a computed value of the partition, defined in `layout` (an
  // external output when it is a partition output).
  std::uint32_t define_output(ValueId value, Layout layout);
  // A float32 value, or an 8-bit one at `quantization`.
  std::uint32_t define_internal(const Dims& dims, const Quantization* quantization = nullptr);
  std::uint32_t define_static(std::vector<float> data, const Dims& dims);
  // Static 8-bit data (qint8 or quint8, as `quantization` stores it).
  std::uint32_t define_static_quantized(const std::vector<std::uint8_t>& data, const Dims& dims,
                                        const Quantization& quantization);
  // A static qint32 value (a bias) of one scale and zero point 0.
  std::uint32_t define_static_int32(const std::vector<std::int32_t>& data, const Dims& dims,
                                    float scale);
  // Static channel-wise data (qcint8 weights or qcint32 biases), one scale
  // per index of dimension `channel_dim`.
  std::uint32_t define_static_channelwise(const void* data, std::size_t bytes, const Dims& dims,
                                          xnn_datatype datatype, const std::vector<float>& scales,
                                          std::size_t channel_dim);
  // The quantization of an 8-bit value of the partition; nullopt for others.
  const std::optional<Quantization>& quantization(ValueId value) const {
    return quantization_[static_cast<std::size_t>(value)];
  }
  // A static scalar of `rank` (all dims 1), which the binary ops broadcast.
  std::uint32_t define_scalar(float value, std::size_t rank);
  // A new internal value of `dims` computed from `a` and `b` by `define`
  // (unclamped); kInvalidId when an operand is, or XNNPACK refuses.
  std::uint32_t binary(BinaryDefine define, const char* what, std::uint32_t a, std::uint32_t b,
                       const Dims& dims);
  // sigmoid(`x`) as a new internal value of `dims`.
  std::uint32_t sigmoid(std::uint32_t x, const Dims& dims);
  // `value` in `layout`, reshaped into it when the value is layout-free.
  std::uint32_t use(ValueId value, Layout layout);
  // `value` with its elements in logical row-major order, whatever its dims.
  std::uint32_t use_in_logical_order(ValueId value);
  // `value` with the rank of `out_shape` (leading 1s) in `layout`, ready for
  // a broadcasting binary op; constants are re-laid out at compile time.
  std::uint32_t broadcast_operand(ValueId value, const Shape& out_shape, Layout layout);
  std::uint32_t reshape(std::uint32_t source, const Dims& dims);
  // The channels-last 4-D value `x` of logical shape `x_shape`, padded by
  // `value`: window.pad_top / pad_left before, `bottom` / `right` after.
  std::uint32_t pad_channels_last(std::uint32_t x, const Shape& x_shape, const Window2d& window,
                                  float value, std::int64_t bottom, std::int64_t right);

  // Whether XNNPACK accepted the definition `what` of the node being
  // emitted; records the failure when it did not.
  bool check(xnn_status status, const char* what);
  // Records `reason` (the first failure is the one reported); false.
  bool fail(std::string reason);

 private:
  // Where a computed value lives in the subgraph.
  struct Slot {
    std::uint32_t id = kInvalidId;
    Layout layout = Layout::kPlain;
  };

  bool define_boundary();
  // A value of the subgraph: float32, or qint8 at `quantization`.
  std::uint32_t define_value(const Dims& dims, const Quantization* quantization, const void* data,
                             std::uint32_t external, std::uint32_t flags, const char* what);
  // Keeps `bytes` (padded by XNN_EXTRA_BYTES) for as long as the runtime.
  const void* keep(const void* bytes, std::size_t size);
  void plan_fusions();
  // XNNPACK gives no buffer to a value nothing reads, and then fails an
  // assertion; nodes no output depends on are left out.
  void mark_live_nodes();
  // Emits `node` by its op table row.
  bool emit(const Node& node);

  const Graph& graph_;
  const LayoutPlan& plan_;
  BuiltSubgraph result_;
  std::vector<Slot> slots_;
  std::vector<std::optional<Quantization>> quantization_;
  // The quantization of each qint8 value defined so far, by XNNPACK id.
  std::map<std::uint32_t, Quantization> id_quantization_;
  std::map<std::pair<ValueId, Layout>, std::uint32_t> converted_;
  std::vector<std::vector<NodeId>> consumers_;
  // Conv -> the BatchNormalization folded into it; MatMul -> the bias Add.
  std::map<NodeId, NodeId> absorbs_;
  std::vector<bool> absorbed_;
  std::vector<bool> live_;
  std::map<ValueId, std::size_t> output_index_;
  NodeId current_id_ = kNoNode;
  const Node* current_ = nullptr;
  std::string failure_;
};

}  // namespace collage::xnnpack
