// Placement: what the user decides about where nodes run, which the search
// honours exactly (docs/placement.md).
//
//   pin     --place 'Conv_12=onednn', --place 'op:Softmax=native': the
//           matching nodes run on that backend and on no other;
//   avoid   --avoid 'xnnpack:op:Softmax', --avoid 'xnnpack:head_*': that
//           backend never runs the matching nodes;
//   pattern a rule of the user's own for a backend (--patterns FILE, the
//           UMA triple: a name, an op pattern, predicates over each
//           matched node's attributes and shapes), offered to the search
//           beside the backend's own candidates.
// A selector names nodes by their names in the canonical graph or, after
// "op:", by op type; `*` matches any run of characters and `?` one.
//
// Constraints act on candidates: constrain() wraps a backend's spec so that
// it offers only candidates whose every node it may run, so the search,
// the coalescer, local moves and the baselines' greedy covers all see the
// constrained candidates alone. baseline_priority() puts pinned nodes first
// in a baseline whose backends do not include their pin.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collage/ir/graph.h"
#include "collage/ir/pattern.h"
#include "collage/partition/partition_spec.h"

namespace collage {

class Backend;

// Whether `text` matches the glob `pattern` (`*` any run, `?` one character).
bool glob_match(const std::string& pattern, const std::string& text);

// The nodes a pin or an avoid applies to.
struct NodeSelector {
  // Match op types ("op:Conv") instead of node names.
  bool by_op = false;
  std::string glob;

  // "Conv_*" or "op:Softmax"; Error for an empty one.
  static NodeSelector parse(const std::string& text);
  bool matches(const Node& node) const;
  std::string to_string() const;
};

struct PlacementRule {
  enum class Kind { kPin, kAvoid };
  Kind kind = Kind::kPin;
  std::string backend;
  NodeSelector nodes;

  // The flag's own spelling: "Conv_12=onednn" for a pin, "xnnpack:op:Softmax"
  // for an avoid.
  std::string to_string() const;
};

// A pattern rule of the user's own for a backend.
struct CustomPattern {
  std::string backend;
  std::string name;
  Pattern pattern;
  // The rule as it was written (JSON), for keys and plans.
  std::string text;
};

class Placement {
 public:
  // Parses and adds one --place / --avoid value; Error naming the flag for
  // malformed text.
  void pin(const std::string& text);
  void avoid(const std::string& text);
  // Reads the pattern rules of a JSON file (docs/placement.md); Error naming
  // the file and the rule for anything malformed.
  void add_patterns_file(const std::string& path);
  // The same from JSON text; `origin` names it in errors.
  void add_patterns_json(const std::string& json, const std::string& origin);

  bool empty() const { return rules_.empty() && patterns_.empty(); }
  const std::vector<PlacementRule>& rules() const { return rules_; }
  const std::vector<CustomPattern>& patterns() const { return patterns_; }

  // The pin that applies to `node`, or null (the first, when several do:
  // check() refuses pins that disagree).
  const PlacementRule* pin_of(const Node& node) const;
  // Whether `backend` may run `node`.
  bool admits(const Node& node, const std::string& backend) const;

  // Throws Error, before anything is measured, when the constraints cannot
  // be honoured on `graph` with `backends` (native first): a rule that
  // matches no node, a pin to a backend that is not among them or that does
  // not run the node, two pins that disagree, a node every backend that
  // runs it is avoided for, a rule for a backend not in `known` (the
  // backends of this build).
  void check(const Graph& graph, const std::vector<const Backend*>& backends,
             const std::vector<std::string>& known) const;

  // `spec` offering its own candidates and this placement's pattern rules
  // for its backend, only those whose every operator its backend may run;
  // `spec` itself when nothing applies to it. With `pinned_only`, only
  // candidates of nodes pinned to its backend.
  PartitionSpecPtr constrain(const PartitionSpecPtr& spec, bool pinned_only = false) const;
  // The priority order of a greedy baseline that names the backends of
  // `named` and falls back to `fallback`: first, for each spec of `specs`
  // whose backend has pins and is neither named nor the fallback, that spec
  // restricted to its pinned nodes (so that the baseline honours the pins),
  // then `named`.
  std::vector<PartitionSpecPtr> baseline_priority(const std::vector<PartitionSpecPtr>& specs,
                                                  const std::vector<PartitionSpecPtr>& named,
                                                  const std::string& fallback) const;

  // Every rule and pattern as text, one per line, in a stable order: what
  // keys of learned state include and plans record.
  std::vector<std::string> describe() const;

 private:
  std::vector<PlacementRule> rules_;
  std::vector<CustomPattern> patterns_;
};

}  // namespace collage
