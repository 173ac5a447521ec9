#include "collage/ir/passes/merge_common_subexpressions.h"

#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "collage/ir/passes/rewrite_util.h"

namespace collage {
namespace {

// Constants above this size are weights; equal weights are rare and hashing
// them would cost import time on every model.
constexpr std::size_t kMaxMergedConstantBytes = 1 << 16;

bool has_random_result(const Node& node) {
  return node.op_type.rfind("Random", 0) == 0 || node.op_type == "Bernoulli" ||
         node.op_type == "Multinomial" || node.op_type == "Dropout";
}

std::size_t combine(std::size_t seed, std::size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

int merge_constants(Graph& graph) {
  std::unordered_map<std::size_t, std::vector<ValueId>> by_hash;
  int merged = 0;
  for (std::size_t v = 0; v < graph.num_values(); ++v) {
    const auto id = static_cast<ValueId>(v);
    const Value& value = graph.value(id);
    if (!value.is_constant() || graph.is_output(id)) continue;
    const Tensor& tensor = *value.constant;
    if (tensor.byte_size() > kMaxMergedConstantBytes) continue;
    std::size_t hash = std::hash<std::string_view>{}(
        std::string_view(static_cast<const char*>(tensor.raw()), tensor.byte_size()));
    hash = combine(hash, static_cast<std::size_t>(tensor.dtype()));
    for (std::int64_t dim : tensor.shape()) hash = combine(hash, static_cast<std::size_t>(dim));
    std::vector<ValueId>& same_hash = by_hash[hash];
    bool replaced = false;
    for (ValueId kept : same_hash) {
      const Tensor& other = *graph.value(kept).constant;
      if (other.type() != tensor.type()) continue;
      if (std::memcmp(other.raw(), tensor.raw(), tensor.byte_size()) != 0) continue;
      graph.replace_uses(id, kept);
      replaced = true;
      ++merged;
      break;
    }
    if (!replaced) same_hash.push_back(id);
  }
  return merged;
}

std::size_t node_hash(const Node& node) {
  std::size_t hash = std::hash<std::string>{}(node.op_type);
  hash = combine(hash, std::hash<std::string>{}(node.domain));
  for (ValueId input : node.inputs) hash = combine(hash, static_cast<std::size_t>(input + 1));
  hash = combine(hash, node.outputs.size());
  return hash;
}

bool same_computation(const Node& a, const Node& b) {
  return a.op_type == b.op_type && a.domain == b.domain && a.inputs == b.inputs &&
         a.outputs.size() == b.outputs.size() && same_attributes(a.attributes, b.attributes);
}

}  // namespace

CommonSubexpressions merge_common_subexpressions(Graph& graph) {
  CommonSubexpressions merged;
  merged.constants = merge_constants(graph);
  std::unordered_map<std::size_t, std::vector<NodeId>> by_hash;
  const std::size_t nodes_before = graph.num_nodes();
  // Nodes are in topological order, so a node's inputs have already been
  // redirected to their kept duplicates when the node is hashed.
  for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
    const auto id = static_cast<NodeId>(n);
    const Node& node = graph.node(id);
    if (has_random_result(node) || node.outputs.empty()) continue;
    std::vector<NodeId>& same_hash = by_hash[node_hash(node)];
    bool replaced = false;
    for (NodeId kept : same_hash) {
      if (!same_computation(graph.node(kept), node)) continue;
      replaced = true;
      for (std::size_t i = 0; i < node.outputs.size(); ++i) {
        const ValueId mine = graph.node(id).outputs[i];
        const ValueId theirs = graph.node(kept).outputs[i];
        if (mine == kNoValue) continue;
        // A partial merge is still correct: this node keeps computing the
        // outputs it could not hand over.
        replaced = theirs != kNoValue && redirect_uses(graph, mine, theirs) && replaced;
      }
      break;
    }
    if (!replaced) same_hash.push_back(id);
  }
  graph.prune();
  merged.nodes = static_cast<int>(nodes_before - graph.num_nodes());
  return merged;
}

}  // namespace collage
