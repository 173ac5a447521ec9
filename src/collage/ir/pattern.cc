#include "collage/ir/pattern.h"

#include <algorithm>
#include <cassert>

namespace collage {

// One node of a pattern tree. Copies of a Pattern share it, so building
// larger patterns from smaller ones never copies whole trees.
struct Pattern::Node {
  enum class Kind { kOp, kWildcard, kConstant, kAlternatives };

  Kind kind = Kind::kWildcard;
  // kOp: the op type, the patterns of its first inputs, and whether a
  // two-input op may match with its inputs swapped.
  std::string op_type;
  std::vector<Pattern> inputs;
  bool commutative = false;
  std::vector<Predicate> predicates;
  // kAlternatives: tried in order.
  std::vector<Pattern> alternatives;

  // A nested class shares Pattern's access, so this is how the matcher
  // reaches the node behind any sub-pattern.
  static const Node& of(const Pattern& pattern) { return *pattern.node_; }
};

namespace {

using PatternNode = Pattern::Node;
using Matched = std::vector<NodeId>;

// Ops of the default ONNX domain only: a custom-domain op may share a name
// (com.microsoft's FusedConv family) without sharing semantics.
bool in_default_domain(const collage::Node& node) {
  return node.domain.empty() || node.domain == "ai.onnx";
}

// Matches patterns against one graph, root first and then backwards over inputs.
class PatternMatcher {
 public:
  explicit PatternMatcher(const Graph& graph) : graph_(graph) {}

  // Matches `pattern` against the value `value`, appending the nodes it
  // covers to `matched`. On failure `matched` is left as it was.
  bool match_value(const Pattern& pattern, ValueId value, Matched& matched) const {
    const PatternNode& p = node_of(pattern);
    switch (p.kind) {
      case PatternNode::Kind::kWildcard:
        return value != kNoValue;
      case PatternNode::Kind::kConstant:
        return value != kNoValue && graph_.value(value).is_constant();
      case PatternNode::Kind::kOp: {
        if (value == kNoValue) return false;
        NodeId producer = graph_.value(value).producer;
        if (producer == kNoNode) return false;
        return match_node(pattern, producer, matched);
      }
      case PatternNode::Kind::kAlternatives:
        for (const Pattern& alternative : p.alternatives) {
          if (match_value(alternative, value, matched)) return true;
        }
        return false;
    }
    return false;
  }

  // Matches `pattern` against the node `id` itself (the root of a match).
  bool match_node(const Pattern& pattern, NodeId id, Matched& matched) const {
    const PatternNode& p = node_of(pattern);
    if (p.kind == PatternNode::Kind::kAlternatives) {
      for (const Pattern& alternative : p.alternatives) {
        if (match_node(alternative, id, matched)) return true;
      }
      return false;
    }
    // Wildcards and constants describe values, never a node of the match.
    if (p.kind != PatternNode::Kind::kOp) return false;

    const collage::Node& node = graph_.node(id);
    if (node.op_type != p.op_type || !in_default_domain(node)) return false;
    if (node.inputs.size() < p.inputs.size()) return false;
    for (const Predicate& predicate : p.predicates) {
      if (!predicate(graph_, node)) return false;
    }
    std::size_t mark = matched.size();
    if (match_inputs(p.inputs, node.inputs, matched)) {
      matched.push_back(id);
      return true;
    }
    matched.resize(mark);
    if (!p.commutative) return false;
    std::vector<ValueId> swapped = {node.inputs[1], node.inputs[0]};
    if (match_inputs(p.inputs, swapped, matched)) {
      matched.push_back(id);
      return true;
    }
    matched.resize(mark);
    return false;
  }

 private:
  bool match_inputs(const std::vector<Pattern>& patterns, const std::vector<ValueId>& values,
                    Matched& matched) const {
    std::size_t mark = matched.size();
    for (std::size_t i = 0; i < patterns.size(); ++i) {
      if (!match_value(patterns[i], values[i], matched)) {
        matched.resize(mark);
        return false;
      }
    }
    return true;
  }

  static const PatternNode& node_of(const Pattern& pattern) { return PatternNode::of(pattern); }

  using Predicate = Pattern::Predicate;
  const Graph& graph_;
};

Pattern::Node make_op(std::string op_type, std::vector<Pattern> inputs, bool commutative) {
  Pattern::Node node;
  node.kind = Pattern::Node::Kind::kOp;
  node.op_type = std::move(op_type);
  node.inputs = std::move(inputs);
  node.commutative = commutative;
  return node;
}

}  // namespace

Pattern Pattern::op(std::string op_type, std::vector<Pattern> inputs) {
  return Pattern(
      std::make_shared<const Node>(make_op(std::move(op_type), std::move(inputs), false)));
}

Pattern Pattern::commutative_op(std::string op_type, Pattern a, Pattern b) {
  return Pattern(std::make_shared<const Node>(
      make_op(std::move(op_type), {std::move(a), std::move(b)}, true)));
}

Pattern Pattern::wildcard() {
  Node node;
  node.kind = Node::Kind::kWildcard;
  return Pattern(std::make_shared<const Node>(std::move(node)));
}

Pattern Pattern::constant() {
  Node node;
  node.kind = Node::Kind::kConstant;
  return Pattern(std::make_shared<const Node>(std::move(node)));
}

Pattern Pattern::operator|(const Pattern& other) const {
  Node node;
  node.kind = Node::Kind::kAlternatives;
  // Flatten nested alternatives so that long chains of `|` stay one level deep.
  for (const Pattern* side : {this, &other}) {
    const Node& p = *side->node_;
    if (p.kind == Node::Kind::kAlternatives) {
      node.alternatives.insert(node.alternatives.end(), p.alternatives.begin(),
                               p.alternatives.end());
    } else {
      node.alternatives.push_back(*side);
    }
  }
  return Pattern(std::make_shared<const Node>(std::move(node)));
}

Pattern Pattern::optional(const std::function<Pattern(Pattern)>& wrap) const {
  return wrap(*this) | *this;
}

Pattern Pattern::where(Predicate predicate) const {
  const Node& p = *node_;
  if (p.kind == Node::Kind::kAlternatives) {
    // A predicate on a choice of ops applies to whichever op matches.
    Node node;
    node.kind = Node::Kind::kAlternatives;
    for (const Pattern& alternative : p.alternatives) {
      node.alternatives.push_back(alternative.where(predicate));
    }
    return Pattern(std::make_shared<const Node>(std::move(node)));
  }
  assert(p.kind == Node::Kind::kOp && "Pattern::where() applies to op patterns only");
  Node node = p;
  node.predicates.push_back(std::move(predicate));
  return Pattern(std::make_shared<const Node>(std::move(node)));
}

std::optional<std::vector<NodeId>> match(const Pattern& pattern, const Graph& graph, NodeId root) {
  assert(root >= 0 && static_cast<std::size_t>(root) < graph.num_nodes() &&
         "match: root is not a node of the graph");
  PatternMatcher matcher(graph);
  Matched matched;
  if (!matcher.match_node(pattern, root, matched)) return std::nullopt;
  // A node can be reached twice (a diamond-shaped pattern); report it once.
  std::sort(matched.begin(), matched.end());
  matched.erase(std::unique(matched.begin(), matched.end()), matched.end());
  return matched;
}

}  // namespace collage
