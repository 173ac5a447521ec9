#include "collage/search/placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "collage/backends/backend.h"
#include "collage/ir/error.h"
#include "collage/ir/file_io.h"
#include "collage/ir/pattern_json.h"
#include "collage/partition/partition_rule.h"

namespace collage {
namespace {

// A patterns file larger than this is not a list of rules.
constexpr std::int64_t kMaxPatternsFileBytes = 4 << 20;

// The operator nodes of `dfg`'s index set `inside`.
template <typename Visit>
bool all_operators(const DataflowGraph& dfg, const IndexSet& inside, Visit visit) {
  for (PostDfsIndex index : inside) {
    if (dfg.is_host(index)) continue;
    if (!visit(dfg.graph().node(dfg.node_id(index)))) return false;
  }
  return true;
}

// The candidates of a spec's rule (and the placement's pattern rules for its
// backend) whose every operator the placement lets the backend run.
class ConstrainedRule : public PartitionRule {
 public:
  ConstrainedRule(PartitionRulePtr sub_rule, const Placement& placement, std::string backend,
                  bool pinned_only)
      : PartitionRule("placed"),
        sub_rule_(std::move(sub_rule)),
        placement_(placement),
        backend_(std::move(backend)),
        pinned_only_(pinned_only) {}

  std::vector<CandidatePartition> candidates(const DataflowGraph& dfg,
                                             const PartitionSpecPtr& spec) const override {
    std::vector<CandidatePartition> kept;
    for (CandidatePartition& candidate : sub_rule_->candidates(dfg, spec)) {
      bool allowed = all_operators(dfg, candidate.sub_graph.inside(), [&](const Node& node) {
        if (!pinned_only_) return placement_.admits(node, backend_);
        const PlacementRule* pin = placement_.pin_of(node);
        return pin != nullptr && pin->backend == backend_;
      });
      if (allowed) kept.push_back(std::move(candidate));
    }
    return kept;
  }

 private:
  PartitionRulePtr sub_rule_;
  // A copy lives in the spec's rule, so the spec outlives the Placement it
  // was made from.
  Placement placement_;
  std::string backend_;
  bool pinned_only_;
};

}  // namespace

bool glob_match(const std::string& pattern, const std::string& text) {
  // Iterative matching with one backtrack point (the last '*').
  std::size_t p = 0, t = 0, star = std::string::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (star != std::string::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

NodeSelector NodeSelector::parse(const std::string& text) {
  NodeSelector selector;
  std::string glob = text;
  if (glob.rfind("op:", 0) == 0) {
    selector.by_op = true;
    glob = glob.substr(3);
  }
  if (glob.empty()) throw Error("names no nodes (expected NODE_NAME or op:OP_TYPE)");
  selector.glob = glob;
  return selector;
}

bool NodeSelector::matches(const Node& node) const {
  if (!by_op) return glob_match(glob, node.name);
  if (glob_match(glob, node.op_type)) return true;
  // Ops of other domains also answer to their qualified name
  // ("com.microsoft.QLinearAdd").
  return !node.domain.empty() && glob_match(glob, node.domain + "." + node.op_type);
}

std::string NodeSelector::to_string() const { return (by_op ? "op:" : "") + glob; }

std::string PlacementRule::to_string() const {
  return kind == Kind::kPin ? nodes.to_string() + "=" + backend : backend + ":" + nodes.to_string();
}

void Placement::pin(const std::string& text) {
  const std::string field = "--place " + quote_untrusted(text);
  auto equals = text.rfind('=');
  if (equals == std::string::npos) {
    throw Error("expected NODES=BACKEND (NODES: a node name or op:OP_TYPE, * and ? as wildcards)",
                {.field = field});
  }
  PlacementRule rule;
  rule.kind = PlacementRule::Kind::kPin;
  rule.backend = text.substr(equals + 1);
  if (!is_plain_name(rule.backend)) throw Error("names no backend after '='", {.field = field});
  try {
    rule.nodes = NodeSelector::parse(text.substr(0, equals));
  } catch (const Error& e) {
    throw Error(e.message(), {.field = field});
  }
  rules_.push_back(std::move(rule));
}

void Placement::avoid(const std::string& text) {
  const std::string field = "--avoid " + quote_untrusted(text);
  auto colon = text.find(':');
  if (colon == std::string::npos || !is_plain_name(text.substr(0, colon)) ||
      text.substr(0, colon) == "op") {
    throw Error("expected BACKEND:NODES (NODES: a node name or op:OP_TYPE, * and ? as wildcards)",
                {.field = field});
  }
  PlacementRule rule;
  rule.kind = PlacementRule::Kind::kAvoid;
  rule.backend = text.substr(0, colon);
  try {
    rule.nodes = NodeSelector::parse(text.substr(colon + 1));
  } catch (const Error& e) {
    throw Error(e.message(), {.field = field});
  }
  rules_.push_back(std::move(rule));
}

void Placement::add_patterns_file(const std::string& path) {
  std::string text = read_regular_file(path, kMaxPatternsFileBytes);
  add_patterns_json(text, path);
}

void Placement::add_patterns_json(const std::string& text, const std::string& origin) {
  std::set<std::pair<std::string, std::string>> names;
  for (const CustomPattern& known : patterns_) names.emplace(known.backend, known.name);
  for (PatternRuleJson& rule : read_pattern_rules(text, origin, "")) {
    if (!names.emplace(rule.backend, rule.name).second) {
      throw Error(
          fmt::format("rule {}: is given twice for {}", quote_untrusted(rule.name), rule.backend),
          {.file = origin});
    }
    patterns_.push_back(CustomPattern{std::move(rule.backend), std::move(rule.name),
                                      std::move(rule.pattern), std::move(rule.text)});
  }
}

const PlacementRule* Placement::pin_of(const Node& node) const {
  for (const PlacementRule& rule : rules_) {
    if (rule.kind == PlacementRule::Kind::kPin && rule.nodes.matches(node)) return &rule;
  }
  return nullptr;
}

bool Placement::admits(const Node& node, const std::string& backend) const {
  for (const PlacementRule& rule : rules_) {
    if (!rule.nodes.matches(node)) continue;
    if (rule.kind == PlacementRule::Kind::kPin && rule.backend != backend) return false;
    if (rule.kind == PlacementRule::Kind::kAvoid && rule.backend == backend) return false;
  }
  return true;
}

void Placement::check(const Graph& graph, const std::vector<const Backend*>& backends,
                      const std::vector<std::string>& known) const {
  auto is_known = [&](const std::string& name) {
    return std::find(known.begin(), known.end(), name) != known.end();
  };
  std::vector<std::string> names;
  for (const Backend* backend : backends) names.push_back(backend->name());
  auto enabled = [&](const std::string& name) -> const Backend* {
    for (const Backend* backend : backends) {
      if (backend->name() == name) return backend;
    }
    return nullptr;
  };
  for (const PlacementRule& rule : rules_) {
    const bool pin = rule.kind == PlacementRule::Kind::kPin;
    const std::string field =
        fmt::format("{} {}", pin ? "--place" : "--avoid", quote_untrusted(rule.to_string()));
    if (!is_known(rule.backend)) {
      throw Error(fmt::format("this build has no backend {} (it has {})",
                              quote_untrusted(rule.backend), fmt::join(known, ", ")),
                  {.field = field});
    }
    if (pin && !enabled(rule.backend)) {
      throw Error(fmt::format("{} is not among the backends of this run ({}); add it to --backends",
                              rule.backend, fmt::join(names, ", ")),
                  {.field = field});
    }
    bool matched = false;
    for (const Node& node : graph.nodes()) matched = matched || rule.nodes.matches(node);
    if (!matched) {
      throw Error(rule.nodes.by_op
                      ? "the model has no node of this op type"
                      : "matches no node of the model (names are the canonical graph's: "
                        "`collage info MODEL --nodes` lists them)",
                  {.field = field});
    }
  }
  for (const CustomPattern& pattern : patterns_) {
    if (!is_known(pattern.backend)) {
      throw Error(fmt::format("rule {}: this build has no backend {} (it has {})",
                              quote_untrusted(pattern.name), quote_untrusted(pattern.backend),
                              fmt::join(known, ", ")),
                  {.field = "--patterns"});
    }
  }
  for (const Node& node : graph.nodes()) {
    const PlacementRule* pin = pin_of(node);
    if (pin != nullptr) {
      for (const PlacementRule& other : rules_) {
        if (&other == pin || !other.nodes.matches(node)) continue;
        if (other.kind == PlacementRule::Kind::kPin && other.backend != pin->backend) {
          throw Error(fmt::format("pinned to {} (--place {}) and to {} (--place {})", pin->backend,
                                  quote_untrusted(pin->to_string()), other.backend,
                                  quote_untrusted(other.to_string())),
                      {.node = node.name});
        }
        if (other.kind == PlacementRule::Kind::kAvoid && other.backend == pin->backend) {
          throw Error(
              fmt::format("pinned to {} (--place {}) and kept off it (--avoid {})", pin->backend,
                          quote_untrusted(pin->to_string()), quote_untrusted(other.to_string())),
              {.node = node.name});
        }
      }
      if (!enabled(pin->backend)->supports(graph, node)) {
        throw Error(fmt::format("cannot be pinned to {} (--place {}): {} does not run this {} "
                                "(`collage backends` lists what it runs)",
                                pin->backend, quote_untrusted(pin->to_string()), pin->backend,
                                node.op_type),
                    {.node = node.name});
      }
      continue;
    }
    bool runnable = std::any_of(backends.begin(), backends.end(), [&](const Backend* backend) {
      return admits(node, backend->name()) && backend->supports(graph, node);
    });
    if (!runnable) {
      throw Error(fmt::format("no backend of this run may run this {}: each that runs it is "
                              "avoided (--avoid)",
                              node.op_type),
                  {.node = node.name});
    }
  }
}

PartitionSpecPtr Placement::constrain(const PartitionSpecPtr& spec, bool pinned_only) const {
  std::vector<PartitionRulePtr> rules = {spec->rule};
  for (const CustomPattern& pattern : patterns_) {
    if (pattern.backend == spec->name) {
      rules.push_back(std::make_shared<PatternRule>(pattern.name, pattern.pattern));
    }
  }
  const bool applies = std::any_of(rules_.begin(), rules_.end(), [&](const PlacementRule& rule) {
    return rule.kind == PlacementRule::Kind::kPin || rule.backend == spec->name;
  });
  if (!applies && !pinned_only && rules.size() == 1) return spec;
  PartitionRulePtr offered =
      rules.size() == 1 ? spec->rule : std::make_shared<UnionRule>(std::move(rules));
  auto rule = std::make_shared<ConstrainedRule>(std::move(offered), *this, spec->name, pinned_only);
  return make_partition_spec(spec->name, std::move(rule), spec->config, spec->backend,
                             spec->merge_config);
}

std::vector<PartitionSpecPtr> Placement::baseline_priority(
    const std::vector<PartitionSpecPtr>& specs, const std::vector<PartitionSpecPtr>& named,
    const std::string& fallback) const {
  auto present = [&](const std::string& name) {
    return name == fallback || std::any_of(named.begin(), named.end(),
                                           [&](const auto& spec) { return spec->name == name; });
  };
  std::vector<PartitionSpecPtr> priority;
  for (const PartitionSpecPtr& spec : specs) {
    if (present(spec->name)) continue;
    bool has_pins = std::any_of(rules_.begin(), rules_.end(), [&](const PlacementRule& rule) {
      return rule.kind == PlacementRule::Kind::kPin && rule.backend == spec->name;
    });
    if (has_pins) priority.push_back(constrain(spec, /*pinned_only=*/true));
  }
  priority.insert(priority.end(), named.begin(), named.end());
  return priority;
}

std::vector<std::string> Placement::describe() const {
  std::vector<std::string> lines;
  for (const PlacementRule& rule : rules_) {
    lines.push_back((rule.kind == PlacementRule::Kind::kPin ? "place " : "avoid ") +
                    rule.to_string());
  }
  for (const CustomPattern& pattern : patterns_) {
    lines.push_back("pattern " + pattern.backend + ":" + pattern.name + " " + pattern.text);
  }
  return lines;
}

}  // namespace collage
