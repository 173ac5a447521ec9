#include "collage/ir/passes/fold_pads.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "collage/ir/passes/rewrite_util.h"

namespace collage {
namespace {

// The spatial pads of a Pad node of a rank-`rank` tensor, begins then ends,
// when the node pads zeros on the spatial axes only (none on the batch and
// channel axes, none negative); nullopt otherwise.
std::optional<std::vector<std::int64_t>> zero_spatial_pads(const Graph& graph, const Node& pad,
                                                           std::size_t rank) {
  if (pad.attributes.get_string("mode", "constant") != "constant") return std::nullopt;
  if (rank < 3 || pad.input(3) != kNoValue) return std::nullopt;
  std::vector<std::int64_t> all;
  if (graph.opset < 11) {
    // Before opset 11 the pads and the value are attributes.
    if (!pad.attributes.has("pads")) return std::nullopt;
    all = pad.attributes.get_ints("pads");
    if (pad.attributes.get_float("value", 0.0f) != 0.0f) return std::nullopt;
  } else {
    std::optional<std::vector<std::int64_t>> pads = int_constant(graph, pad.input(1));
    if (!pads) return std::nullopt;
    all = std::move(*pads);
    const ValueId value = pad.input(2);
    if (value != kNoValue && !is_scalar_constant(graph, value, 0.0, 0.0)) return std::nullopt;
  }
  if (all.size() != 2 * rank) return std::nullopt;
  if (all[0] != 0 || all[1] != 0 || all[rank] != 0 || all[rank + 1] != 0) return std::nullopt;
  if (std::any_of(all.begin(), all.end(), [](std::int64_t p) { return p < 0; })) {
    return std::nullopt;
  }
  // Begins then ends of the spatial axes: 2 * (rank - 2) values, since `all`
  // has 2 * rank.
  std::vector<std::int64_t> pads;
  pads.insert(pads.end(), all.begin() + 2, all.begin() + static_cast<std::ptrdiff_t>(rank));
  pads.insert(pads.end(), all.begin() + static_cast<std::ptrdiff_t>(rank + 2), all.end());
  return pads;
}

// The reader's own pads when it can take more: nullopt when it cannot.
std::optional<std::vector<std::int64_t>> own_pads(const Node& reader, std::size_t spatial) {
  const std::string auto_pad = reader.attributes.get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return std::nullopt;
  std::vector<std::int64_t> pads(2 * spatial, 0);
  if (auto_pad == "NOTSET" && reader.attributes.has("pads")) {
    pads = reader.attributes.get_ints("pads");
    if (pads.size() != 2 * spatial) return std::nullopt;
  }
  if (is_onnx_op(reader, "Conv")) return pads;
  if (!is_onnx_op(reader, "AveragePool")) return std::nullopt;
  // A ceil_mode window may start in what the Pad made input but the pads
  // would make padding, where no window starts; the output size changes.
  if (reader.attributes.get_int("ceil_mode", 0) != 0) return std::nullopt;
  const bool counts_pads = reader.attributes.get_int("count_include_pad", 0) != 0;
  const bool has_pads =
      std::any_of(pads.begin(), pads.end(), [](std::int64_t p) { return p != 0; });
  if (!counts_pads && has_pads) return std::nullopt;
  return pads;
}

}  // namespace

int fold_pads(Graph& graph) {
  const ValueUsers users(graph);
  int folded = 0;
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const Node& pad = graph.node(static_cast<NodeId>(n));
    if (!is_onnx_op(pad, "Pad") || pad.outputs.size() != 1) continue;
    const ValueId data = pad.inputs[0];
    const ValueId padded = pad.outputs[0];
    const std::size_t rank = graph.type(data).rank();
    std::optional<std::vector<std::int64_t>> added = zero_spatial_pads(graph, pad, rank);
    if (!added) continue;
    for (NodeId id : users.of(padded)) {
      Node& reader = graph.node(id);
      if (reader.inputs.empty() || reader.inputs[0] != padded) continue;
      // A Pad read twice by one node (as data and as weights) stays.
      if (std::count(reader.inputs.begin(), reader.inputs.end(), padded) != 1) continue;
      std::optional<std::vector<std::int64_t>> pads = own_pads(reader, rank - 2);
      if (!pads) continue;
      for (std::size_t i = 0; i < pads->size(); ++i) (*pads)[i] += (*added)[i];
      reader.inputs[0] = data;
      reader.attributes.set("pads", std::move(*pads));
      reader.attributes.erase("auto_pad");
      if (is_onnx_op(reader, "AveragePool"))
        reader.attributes.set("count_include_pad", std::int64_t{1});
      ++folded;
    }
  }
  if (folded > 0) graph.prune();
  return folded;
}

}  // namespace collage
