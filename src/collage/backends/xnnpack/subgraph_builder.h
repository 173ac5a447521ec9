// SubgraphBuilder: translates a partition Graph into one XNNPACK subgraph.
//
// Every node becomes one or a few XNNPACK subgraph nodes, over values stored
// in the layouts of a LayoutPlan. Weights are re-laid out once here (OIHW to
// OHWI, depthwise filters to 1HWO, MatMul's [K,N] to [N,K]) and inference
// BatchNormalization is folded into the convolution that feeds it; a MatMul
// followed by the addition of a bias vector becomes one fully connected
// node. The result holds the subgraph, the buffers its static values point
// to (which must outlive every runtime made from it) and, for each partition
// input and output, the XNNPACK external value and the layout it is staged
// in. Any node or parameter XNNPACK rejects makes the whole build a Failure.
#pragma once

#include <xnnpack.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "collage/backends/xnnpack/channels_last.h"
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
};

struct BuiltSubgraph {
  SubgraphHandle subgraph;
  std::vector<ExternalValue> inputs;   // in partition.inputs() order
  std::vector<ExternalValue> outputs;  // in partition.outputs() order
  // Data of static values (weights, broadcast constants), padded by
  // XNN_EXTRA_BYTES. Moving the outer vector keeps the inner buffers in place.
  std::vector<std::vector<float>> static_data;
};

// "invalid parameter", "out of memory", ...: for failure reasons.
const char* status_name(xnn_status status);

// Builds the subgraph of `partition`, whose nodes must all be supported
// (supports_node). XNNPACK must be initialized.
Result<BuiltSubgraph> build_subgraph(const Graph& partition);

}  // namespace collage::xnnpack
