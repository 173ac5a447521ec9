#include "collage/ir/passes/fold_channel_shuffles.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "collage/ir/passes/partial_type.h"
#include "collage/ir/passes/rewrite_util.h"
#include "collage/ir/transpose_perm.h"

namespace collage {
namespace {

bool is_reshape(const Node& node) {
  return is_onnx_op(node, "Reshape") && node.outputs.size() == 1 && node.input(0) != kNoValue;
}

// Whether `out` is `in` with axis `k` split in two: out[k] * out[k + 1] ==
// in[k], both more than one, every other axis as it was.
bool splits_axis(const Shape& in, const Shape& out, std::size_t k) {
  if (out.size() != in.size() + 1 || k >= in.size()) return false;
  if (out[k] < 2 || out[k + 1] < 2 || out[k] * out[k + 1] != in[k]) return false;
  for (std::size_t d = 0; d < k; ++d) {
    if (in[d] != out[d]) return false;
  }
  for (std::size_t d = k + 1; d < in.size(); ++d) {
    if (in[d] != out[d + 1]) return false;
  }
  return true;
}

// Whether `perm` swaps axes k and k + 1 and leaves the others.
bool swaps_neighbours(const std::vector<std::int64_t>& perm, std::size_t k) {
  for (std::size_t d = 0; d < perm.size(); ++d) {
    const std::size_t expected = d == k ? k + 1 : d == k + 1 ? k : d;
    if (perm[d] != static_cast<std::int64_t>(expected)) return false;
  }
  return true;
}

// The Gather that Reshape `merge` of a Transpose of a Reshape computes, as
// its source, axis and indices, when the chain is a shuffle of one axis.
struct AxisGather {
  ValueId source = kNoValue;
  std::size_t axis = 0;
  std::vector<std::int64_t> indices;
};

std::optional<AxisGather> shuffle_gather(const Graph& graph, const ValueUsers& users,
                                         const Node& merge) {
  if (!is_reshape(merge)) return std::nullopt;
  const Node* transpose = made_by(graph, merge.inputs[0], "Transpose");
  if (transpose == nullptr || transpose->inputs.size() != 1 ||
      !users.only_by_one_node(merge.inputs[0])) {
    return std::nullopt;
  }
  const Node* split = producer_of(graph, transpose->inputs[0]);
  if (split == nullptr || !is_reshape(*split) || !users.only_by_one_node(transpose->inputs[0])) {
    return std::nullopt;
  }
  const TensorType& in = graph.type(split->inputs[0]);
  const TensorType& parts = graph.type(split->outputs[0]);
  const TensorType& out = graph.type(merge.outputs[0]);
  if (!is_static(in) || !is_static(parts) || out.shape != in.shape) return std::nullopt;
  const std::vector<std::int64_t> perm = transpose_permutation(graph, *transpose);
  if (perm.size() != parts.shape.size()) return std::nullopt;
  for (std::size_t k = 0; k < in.shape.size(); ++k) {
    if (!splits_axis(in.shape, parts.shape, k) || !swaps_neighbours(perm, k)) continue;
    // parts[.., i, m, ..] = in[.., i * c + m, ..]; swapped and merged,
    // out[.., m * g + i, ..] = parts[.., i, m, ..].
    const std::int64_t groups = parts.shape[k];
    const std::int64_t per_group = parts.shape[k + 1];
    AxisGather gather{split->inputs[0], k, std::vector<std::int64_t>(in.shape[k])};
    for (std::int64_t i = 0; i < groups; ++i) {
      for (std::int64_t m = 0; m < per_group; ++m) {
        gather.indices[static_cast<std::size_t>(m * groups + i)] = i * per_group + m;
      }
    }
    return gather;
  }
  return std::nullopt;
}

// A Gather of constant 1-D indices that `value` is the output of.
std::optional<AxisGather> gather_of_constant_indices(const Graph& graph, ValueId value) {
  const Node* gather = made_by(graph, value, "Gather");
  if (gather == nullptr || gather->inputs.size() != 2) return std::nullopt;
  std::optional<std::vector<std::int64_t>> indices = int_constant(graph, gather->inputs[1]);
  const TensorType& data = graph.type(gather->inputs[0]);
  if (!indices || !is_static(data)) return std::nullopt;
  const auto rank = static_cast<std::int64_t>(data.rank());
  std::int64_t axis = gather->attributes.get_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  const std::int64_t dim = data.shape[static_cast<std::size_t>(axis)];
  for (std::int64_t& index : *indices) {
    if (index < 0) index += dim;
    if (index < 0 || index >= dim) return std::nullopt;
  }
  return AxisGather{gather->inputs[0], static_cast<std::size_t>(axis), std::move(*indices)};
}

// The indices of `gather` that Slice `slice` of its output keeps, when the
// Slice takes all of every other axis.
std::optional<std::vector<std::int64_t>> sliced_indices(const Graph& graph, const Node& slice,
                                                        const AxisGather& gather) {
  if (graph.opset < 10 || slice.inputs.size() < 3 || slice.outputs.size() != 1) {
    return std::nullopt;
  }
  const Shape& shape = graph.type(slice.inputs[0]).shape;
  const auto rank = static_cast<std::int64_t>(shape.size());
  std::optional<std::vector<std::int64_t>> starts = int_constant(graph, slice.inputs[1]);
  std::optional<std::vector<std::int64_t>> ends = int_constant(graph, slice.inputs[2]);
  std::optional<std::vector<std::int64_t>> axes, steps;
  if (slice.inputs.size() > 3 && slice.inputs[3] != kNoValue) {
    axes = int_constant(graph, slice.inputs[3]);
    if (!axes) return std::nullopt;
  }
  if (slice.inputs.size() > 4 && slice.inputs[4] != kNoValue) {
    steps = int_constant(graph, slice.inputs[4]);
    if (!steps) return std::nullopt;
  }
  if (!starts || !ends || ends->size() != starts->size()) return std::nullopt;
  if (!axes) {
    axes.emplace();
    for (std::size_t i = 0; i < starts->size(); ++i) axes->push_back(static_cast<std::int64_t>(i));
  }
  if (!steps) steps.emplace(starts->size(), 1);
  if (axes->size() != starts->size() || steps->size() != starts->size()) return std::nullopt;
  std::vector<std::int64_t> kept = gather.indices;
  for (std::size_t i = 0; i < starts->size(); ++i) {
    const std::int64_t axis = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
    if (axis < 0 || axis >= rank) return std::nullopt;
    const std::int64_t dim = shape[static_cast<std::size_t>(axis)];
    const std::int64_t step = (*steps)[i];
    if (step < 1) return std::nullopt;
    const std::int64_t start =
        std::clamp<std::int64_t>((*starts)[i] < 0 ? (*starts)[i] + dim : (*starts)[i], 0, dim);
    const std::int64_t end =
        std::clamp<std::int64_t>((*ends)[i] < 0 ? (*ends)[i] + dim : (*ends)[i], 0, dim);
    if (axis != static_cast<std::int64_t>(gather.axis)) {
      if (start != 0 || end != dim || step != 1) return std::nullopt;
      continue;
    }
    std::vector<std::int64_t> taken;
    for (std::int64_t j = start; j < end; j += step) {
      taken.push_back(gather.indices[static_cast<std::size_t>(j)]);
    }
    kept = std::move(taken);
  }
  if (kept.empty() ||
      static_cast<std::int64_t>(kept.size()) != graph.type(slice.outputs[0]).shape[gather.axis]) {
    return std::nullopt;
  }
  return kept;
}

// Node `n` becomes a Gather of `source` along `axis` at `indices`.
void make_gather(Graph& graph, NodeId n, ValueId source, std::size_t axis,
                 const std::vector<std::int64_t>& indices) {
  const ValueId index_value = graph.add_constant(
      unused_value_name(graph, graph.value(graph.node(n).outputs[0]).name + "/indices"),
      Tensor::from_vector(indices, {static_cast<std::int64_t>(indices.size())}));
  Node& node = graph.node(n);
  node.op_type = "Gather";
  node.domain.clear();
  node.inputs = {source, index_value};
  node.attributes = {};
  node.attributes.set("axis", static_cast<std::int64_t>(axis));
}

}  // namespace

ChannelShuffleFolds fold_channel_shuffles(Graph& graph) {
  ChannelShuffleFolds folds;
  const ValueUsers users(graph);
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const auto id = static_cast<NodeId>(n);
    const Node& node = graph.node(id);
    if (std::optional<AxisGather> shuffle = shuffle_gather(graph, users, node)) {
      make_gather(graph, id, shuffle->source, shuffle->axis, shuffle->indices);
      ++folds.shuffles;
      continue;
    }
    if (!is_onnx_op(node, "Slice") || node.input(0) == kNoValue) continue;
    std::optional<AxisGather> gather = gather_of_constant_indices(graph, node.inputs[0]);
    if (!gather) continue;
    if (std::optional<std::vector<std::int64_t>> kept = sliced_indices(graph, node, *gather)) {
      make_gather(graph, id, gather->source, gather->axis, *kept);
      ++folds.slices;
    }
  }
  if (folds.shuffles + folds.slices > 0) graph.prune();
  return folds;
}

}  // namespace collage
