#include "collage/backends/native/elementwise_fusion.h"

#include <algorithm>
#include <cassert>
#include <unordered_map>

#include "collage/backends/native/layout_ops.h"
#include "collage/ir/error.h"

namespace collage::native {
namespace {

// Outputs evaluated per step at a time: intermediates of a few steps at this
// size stay in L1.
constexpr std::int64_t kBlock = 512;

// Inner runs shorter than this are merged with the dim around them
// (merge_periodic): a call per run of a few lanes costs more than the run.
constexpr std::int64_t kShortRun = kBlock;

// Merges the plan's last two dims, [rows, inner] with inner < kShortRun, into
// one, where every leaf walks them as (inner, 1) (contiguous), (0, 0) (a
// constant) or (0, 1): the inner floats repeat along the merged dim, as a
// per-channel operand does over an output stored in blocks of channels. The
// last become `periodic`, with stride 0 in the merged plan (their offset at a
// run's start is that of its first period). Returns false, leaving `plan`
// as it is, where a leaf walks them otherwise or the runs are long.
bool merge_periodic(BroadcastPlan& plan, std::vector<bool>& periodic) {
  const std::size_t rank = plan.dims.size();
  if (rank < 2 || plan.inner() >= kShortRun) return false;
  const std::int64_t inner = plan.inner();
  std::vector<bool> flags(plan.strides.size(), false);
  for (std::size_t k = 0; k < plan.strides.size(); ++k) {
    const std::int64_t outer = plan.strides[k][rank - 2];
    const std::int64_t step = plan.strides[k][rank - 1];
    if (step == 1 && outer == inner) continue;
    if (step == 0 && outer == 0) continue;
    if (step == 1 && outer == 0) {
      flags[k] = true;
      continue;
    }
    return false;
  }
  plan.dims[rank - 2] *= inner;
  plan.dims.pop_back();
  for (std::size_t k = 0; k < flags.size(); ++k) {
    std::vector<std::int64_t>& strides = plan.strides[k];
    strides[rank - 2] = flags[k] ? 0 : strides[rank - 1];
    strides.pop_back();
  }
  periodic = std::move(flags);
  return true;
}

// The operand inputs of `node` (Clip's bounds are parameters, not operands).
std::span<const ValueId> operand_inputs(const Node& node, const ElementwiseFn& fn) {
  return std::span<const ValueId>(node.inputs).first(static_cast<std::size_t>(fn.operands));
}

}  // namespace

std::vector<FusionGroup> find_fusion_groups(const Graph& graph) {
  const std::vector<std::vector<NodeId>> consumers = graph.consumers();
  std::vector<int> group_of(graph.num_nodes(), -1);
  std::vector<std::vector<NodeId>> members;
  // Consumers come after producers, so walking backwards decides every
  // consumer's group before its producers ask to join it.
  for (NodeId id = static_cast<NodeId>(graph.num_nodes()) - 1; id >= 0; --id) {
    const Node& node = graph.node(id);
    if (!float_elementwise_fn(graph, node)) continue;
    const ValueId output = node.outputs[0];
    const std::vector<NodeId>& readers = consumers[static_cast<std::size_t>(output)];
    int group = -1;
    if (!graph.is_output(output) && !readers.empty()) {
      const int candidate = group_of[static_cast<std::size_t>(readers[0])];
      const bool all_inside = std::all_of(readers.begin(), readers.end(), [&](NodeId reader) {
        return group_of[static_cast<std::size_t>(reader)] == candidate;
      });
      if (candidate >= 0 && all_inside) group = candidate;
    }
    if (group < 0) {
      group = static_cast<int>(members.size());
      members.emplace_back();
    }
    group_of[static_cast<std::size_t>(id)] = group;
    members[static_cast<std::size_t>(group)].push_back(id);
  }

  std::vector<FusionGroup> groups;
  groups.reserve(members.size());
  for (std::vector<NodeId>& nodes : members) {
    std::reverse(nodes.begin(), nodes.end());
    FusionGroup group;
    group.output = graph.node(nodes.back()).outputs[0];
    const int self = group_of[static_cast<std::size_t>(nodes.back())];
    for (NodeId id : nodes) {
      const Node& node = graph.node(id);
      const ElementwiseFn fn = *float_elementwise_fn(graph, node);
      for (ValueId input : operand_inputs(node, fn)) {
        const NodeId producer = graph.value(input).producer;
        const bool inside =
            producer != kNoNode && group_of[static_cast<std::size_t>(producer)] == self;
        if (inside) continue;
        if (std::find(group.leaves.begin(), group.leaves.end(), input) != group.leaves.end()) {
          continue;
        }
        group.leaves.push_back(input);
      }
    }
    group.nodes = std::move(nodes);
    groups.push_back(std::move(group));
  }
  std::sort(groups.begin(), groups.end(), [](const FusionGroup& a, const FusionGroup& b) {
    return a.nodes.back() < b.nodes.back();
  });
  return groups;
}

ElementwiseProgram::ElementwiseProgram(Shape output_shape, std::vector<Shape> leaf_shapes,
                                       std::vector<Step> steps)
    : output_shape_(std::move(output_shape)),
      leaf_shapes_(std::move(leaf_shapes)),
      steps_(std::move(steps)),
      plan_(plan_broadcast(output_shape_, leaf_shapes_)) {
  assert(!steps_.empty() && "ElementwiseProgram: no steps");
  const std::int64_t inner = plan_.inner();
  if (merge_periodic(plan_, periodic_)) period_ = inner;
#ifndef NDEBUG
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    for (const Operand& operand : steps_[s].operands) {
      assert((operand.is_leaf ? operand.index < static_cast<int>(leaf_shapes_.size())
                              : operand.index < static_cast<int>(s)) &&
             "ElementwiseProgram: operand refers to a later step or a missing leaf");
    }
  }
#endif
}

ElementwiseProgram ElementwiseProgram::compile(const Graph& graph, const FusionGroup& group,
                                               EdgeLayout layout) {
  // In a channels-last or blocked layout the loop walks the output as it is
  // stored, and each leaf broadcasts in those dims (layout_ops.h).
  const bool in_layout = laid_out(graph.type(group.output), layout);
  auto dims = [&](const Shape& shape) { return in_layout ? laid_out_dims(shape, layout) : shape; };
  std::unordered_map<ValueId, Operand> operand_of;
  std::vector<Shape> leaf_shapes;
  for (std::size_t l = 0; l < group.leaves.size(); ++l) {
    operand_of[group.leaves[l]] = Operand{true, static_cast<int>(l)};
    leaf_shapes.push_back(dims(graph.type(group.leaves[l]).shape));
  }
  std::vector<Step> steps;
  for (NodeId id : group.nodes) {
    const Node& node = graph.node(id);
    std::optional<ElementwiseFn> fn = float_elementwise_fn(graph, node);
    assert(fn && "ElementwiseProgram::compile: node is not a float elementwise op");
    Step step{*fn, {}};
    Shape broadcast;
    for (ValueId input : operand_inputs(node, *fn)) {
      auto it = operand_of.find(input);
      assert(it != operand_of.end() && "ElementwiseProgram::compile: input defined nowhere");
      step.operands.push_back(it->second);
      broadcast = broadcast_shapes(broadcast, graph.type(input).shape);
    }
    // The fused loop trusts the static shapes, so a node whose output is not
    // the broadcast of its inputs would silently compute something else.
    if (broadcast != graph.type(node.outputs[0]).shape) {
      throw Error("output shape " + shape_to_string(graph.type(node.outputs[0]).shape) +
                      " is not the broadcast of the inputs " + shape_to_string(broadcast),
                  {.node = node.name});
    }
    operand_of[node.outputs[0]] = Operand{false, static_cast<int>(steps.size())};
    steps.push_back(std::move(step));
  }
  return ElementwiseProgram(dims(graph.type(group.output).shape), std::move(leaf_shapes),
                            std::move(steps));
}

void ElementwiseProgram::run(std::span<const Tensor> leaves, Tensor& output, int threads) const {
  assert(leaves.size() == leaf_shapes_.size() && "ElementwiseProgram::run: wrong leaf count");
  assert(output.numel() == shape_numel(output_shape_) && "ElementwiseProgram::run: wrong output");
  std::vector<const float*> bases(leaves.size());
  for (std::size_t l = 0; l < leaves.size(); ++l) {
    assert(leaves[l].numel() == shape_numel(leaf_shapes_[l]) &&
           "ElementwiseProgram::run: wrong leaf");
    bases[l] = leaves[l].data<float>();
  }
  float* out = output.data<float>();
  std::size_t max_operands = 0;
  for (const Step& step : steps_) max_operands = std::max(max_operands, step.operands.size());

  // A periodic leaf is read through a copy of its period repeated to cover a
  // block from any phase, so that the block functions see it contiguous.
  const std::int64_t tile_size = period_ > 0 ? kBlock + period_ : 0;

  for_each_run(
      plan_, threads, [&](std::int64_t out_offset, const std::int64_t* in_offsets, std::int64_t n) {
        // Per-thread scratch, kept across calls so that short runs do not allocate.
        thread_local std::vector<float> scratch;
        thread_local std::vector<const float*> pointers;
        thread_local std::vector<std::int64_t> strides;
        thread_local std::vector<float> tiles;
        scratch.resize(std::max(scratch.size(), steps_.size() * kBlock));
        pointers.resize(std::max(pointers.size(), max_operands));
        strides.resize(std::max(strides.size(), max_operands));
        // The run's first element sits at this phase of every period.
        const std::int64_t phase = period_ > 0 ? out_offset % period_ : 0;
        if (period_ > 0) {
          // Enough for the run's longest block from any phase.
          const std::int64_t fill = std::min(kBlock, n) + period_;
          tiles.resize(
              std::max(tiles.size(), periodic_.size() * static_cast<std::size_t>(tile_size)));
          for (std::size_t l = 0; l < periodic_.size(); ++l) {
            if (!periodic_[l]) continue;
            const float* period = bases[l] + in_offsets[l];
            float* tile = tiles.data() + l * static_cast<std::size_t>(tile_size);
            // The period from the phase on, then doubled until it covers `fill`.
            std::copy(period + phase, period + period_, tile);
            std::copy(period, period + phase, tile + (period_ - phase));
            for (std::int64_t have = period_; have < fill; have *= 2) {
              std::copy_n(tile, std::min(have, fill - have), tile + have);
            }
          }
        }
        for (std::int64_t begin = 0; begin < n; begin += kBlock) {
          const std::int64_t count = std::min(kBlock, n - begin);
          for (std::size_t s = 0; s < steps_.size(); ++s) {
            const Step& step = steps_[s];
            for (std::size_t k = 0; k < step.operands.size(); ++k) {
              const Operand operand = step.operands[k];
              const auto index = static_cast<std::size_t>(operand.index);
              if (operand.is_leaf && period_ > 0 && periodic_[index]) {
                strides[k] = 1;
                pointers[k] =
                    tiles.data() + index * static_cast<std::size_t>(tile_size) + begin % period_;
              } else if (operand.is_leaf) {
                strides[k] = plan_.inner_stride(index);
                pointers[k] = bases[index] + in_offsets[index] + begin * strides[k];
              } else {
                strides[k] = 1;
                pointers[k] = scratch.data() + static_cast<std::int64_t>(index) * kBlock;
              }
            }
            float* destination = s + 1 == steps_.size()
                                     ? out + out_offset + begin
                                     : scratch.data() + static_cast<std::int64_t>(s) * kBlock;
            apply_block(step.fn, pointers.data(), strides.data(), destination, count);
          }
        }
      });
}

}  // namespace collage::native
