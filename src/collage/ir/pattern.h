// Pattern: a small dataflow pattern language over a Graph.
//
// Library-style backends describe the multi-op calls they can make
// (conv+bias+relu, matmul+add+gelu) as patterns; the partitioner turns each
// match into a candidate partition. A pattern is matched from a root node
// backwards over its inputs:
//   Pattern conv = Pattern::op("Conv", {Pattern::wildcard(), Pattern::constant()});
//   Pattern fused = conv.optional([](Pattern p) { return Pattern::op("Relu", {p}); });
// op() sub-patterns constrain the first inputs of the node in order (later
// inputs are free); an op sub-pattern matches a value defined by a node that
// matches it, and that node joins the match. wildcard() matches any value and
// stops there; constant() matches an initializer. `a | b` tries a, then b.
// where() adds a predicate on the matched node (attributes, types).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collage/ir/graph.h"

namespace collage {

class Pattern {
 public:
  using Predicate = std::function<bool(const Graph&, const Node&)>;

  // A node of type `op_type` whose first inputs match `inputs`.
  static Pattern op(std::string op_type, std::vector<Pattern> inputs = {});
  // Like op(), for a two-input commutative op: also tries the inputs swapped.
  static Pattern commutative_op(std::string op_type, Pattern a, Pattern b);
  static Pattern wildcard();
  static Pattern constant();

  // Alternatives, tried left to right; the first that matches wins.
  Pattern operator|(const Pattern& other) const;
  // `wrap(*this) | *this`: this pattern, optionally consumed by what wrap adds.
  Pattern optional(const std::function<Pattern(Pattern)>& wrap) const;
  // The same pattern with an extra predicate on the node it matches (op patterns only).
  Pattern where(Predicate predicate) const;

  struct Node;  // implementation detail, shared between copies

 private:
  explicit Pattern(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  std::shared_ptr<const Node> node_;
  friend std::optional<std::vector<NodeId>> match(const Pattern&, const Graph&, NodeId);
};

// Matches `pattern` rooted at node `root`. On success, returns the nodes of
// the match in increasing id order (root included); nullopt otherwise.
std::optional<std::vector<NodeId>> match(const Pattern& pattern, const Graph& graph, NodeId root);

}  // namespace collage
