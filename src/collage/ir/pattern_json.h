// Patterns written in JSON: the rules users add for a backend (--patterns,
// docs/placement.md) and the multi-op entries a backend plugin declares
// (include/collage/backend_plugin.h) share one language.
//
//   {"patterns": [{"name": "conv_sigmoid", "backend": "xnnpack",
//                  "pattern": {"op": "Sigmoid", "inputs": [{"op": "Conv",
//                              "inputs": ["any", "constant"],
//                              "where": {"attributes": {"group": 1}}}]}}]}
//
// A pattern is "any", "constant", {"op": T, "inputs": [...], "where": {...},
// "commutative": bool} or {"one_of": [...]}; "where" tests the node's
// attributes (equality) and its first output's dtype, rank, min_elements
// and max_elements.
#pragma once

#include <string>
#include <vector>

#include "collage/ir/pattern.h"

namespace collage {

struct PatternRuleJson {
  std::string name;
  std::string backend;
  Pattern pattern;
  // The rule as JSON (compact), for keys and plans.
  std::string text;
};

// The rules of a {"patterns": [...]} document. A rule without "backend"
// gets `default_backend`; when that is empty, "backend" is required. Throws
// Error naming `origin` (a file) and the rule for anything malformed: not
// JSON, an unknown key, a rule without a name, a pattern that is not one.
std::vector<PatternRuleJson> read_pattern_rules(const std::string& json, const std::string& origin,
                                                const std::string& default_backend);

// Whether `text` may name a backend or a rule: letters, digits, '_' and '-'.
bool is_plain_name(const std::string& text);

}  // namespace collage
