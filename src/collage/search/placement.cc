#include "collage/search/placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "collage/backends/backend.h"
#include "collage/ir/error.h"
#include "collage/ir/file_io.h"
#include "collage/partition/partition_rule.h"

namespace collage {
namespace {

using Json = nlohmann::json;

// A patterns file larger than this is not a list of rules.
constexpr std::int64_t kMaxPatternsFileBytes = 4 << 20;

// A backend name as the flags write it: letters, digits, '_' and '-'.
bool is_backend_name(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

// Whether an attribute has the value a predicate expects (`expected` holds
// one of the kinds attribute_value() reads; a float compares exactly).
bool same_attribute(const AttributeValue& actual, const AttributeValue& expected) {
  if (actual.index() != expected.index()) {
    // An integer written where the attribute is a float.
    const auto* wanted = std::get_if<std::int64_t>(&expected);
    const auto* have = std::get_if<float>(&actual);
    return wanted != nullptr && have != nullptr && *have == static_cast<float>(*wanted);
  }
  if (const auto* v = std::get_if<std::int64_t>(&expected))
    return std::get<std::int64_t>(actual) == *v;
  if (const auto* v = std::get_if<float>(&expected)) return std::get<float>(actual) == *v;
  if (const auto* v = std::get_if<std::string>(&expected))
    return std::get<std::string>(actual) == *v;
  if (const auto* v = std::get_if<std::vector<std::int64_t>>(&expected)) {
    return std::get<std::vector<std::int64_t>>(actual) == *v;
  }
  return false;
}

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

// --- Pattern rules from JSON ------------------------------------------------

class PatternReader {
 public:
  explicit PatternReader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& rule, const std::string& message) const {
    throw Error(rule.empty() ? message : fmt::format("rule {}: {}", quote_untrusted(rule), message),
                {.file = origin_});
  }

  // "any", "constant", or {"op": ..., "inputs": [...], "where": {...},
  // "commutative": bool}, or {"one_of": [...]}.
  Pattern read(const Json& json, const std::string& rule, int depth = 0) const {
    if (depth > 32) fail(rule, "the pattern nests more than 32 levels deep");
    if (json.is_string()) {
      const std::string& word = json.get_ref<const std::string&>();
      if (word == "any") return Pattern::wildcard();
      if (word == "constant") return Pattern::constant();
      fail(rule, fmt::format("{} is not a pattern (\"any\", \"constant\" or an object)",
                             quote_untrusted(word)));
    }
    if (!json.is_object()) fail(rule, "a pattern is \"any\", \"constant\" or an object");
    if (json.contains("one_of")) {
      const Json& options = json.at("one_of");
      if (!options.is_array() || options.empty() || json.size() != 1) {
        fail(rule, "\"one_of\" takes a non-empty list of patterns and nothing beside it");
      }
      Pattern result = read(options[0], rule, depth + 1);
      for (std::size_t i = 1; i < options.size(); ++i)
        result = result | read(options[i], rule, depth + 1);
      return result;
    }
    for (const auto& [key, value] : json.items()) {
      if (key != "op" && key != "inputs" && key != "where" && key != "commutative") {
        fail(rule, fmt::format("unknown pattern key {} (op, inputs, where, commutative, one_of)",
                               quote_untrusted(key)));
      }
    }
    if (!json.contains("op") || !json.at("op").is_string() ||
        json.at("op").get_ref<const std::string&>().empty()) {
      fail(rule, "an op pattern needs \"op\": the op type");
    }
    const std::string op = json.at("op").get<std::string>();
    std::vector<Pattern> inputs;
    if (json.contains("inputs")) {
      if (!json.at("inputs").is_array()) fail(rule, "\"inputs\" is a list of patterns");
      for (const Json& input : json.at("inputs")) inputs.push_back(read(input, rule, depth + 1));
    }
    bool commutative = json.contains("commutative") && json.at("commutative").is_boolean() &&
                       json.at("commutative").get<bool>();
    if (commutative && inputs.size() != 2) fail(rule, "a commutative op pattern has two inputs");
    Pattern pattern = commutative ? Pattern::commutative_op(op, inputs[0], inputs[1])
                                  : Pattern::op(op, std::move(inputs));
    if (json.contains("where")) pattern = pattern.where(read_predicate(json.at("where"), rule));
    return pattern;
  }

 private:
  // {"attributes": {name: value}, "dtype": "f32", "rank": n,
  //  "min_elements": n, "max_elements": n}: all of them about the node's
  // attributes and its first output.
  Pattern::Predicate read_predicate(const Json& json, const std::string& rule) const {
    if (!json.is_object()) fail(rule, "\"where\" is an object");
    std::map<std::string, AttributeValue> attributes;
    std::optional<DType> dtype;
    std::optional<std::int64_t> rank, min_elements, max_elements;
    for (const auto& [key, value] : json.items()) {
      if (key == "attributes") {
        if (!value.is_object()) fail(rule, "\"attributes\" is an object of name: value");
        for (const auto& [name, expected] : value.items()) {
          attributes.emplace(name, attribute_value(expected, rule, name));
        }
      } else if (key == "dtype") {
        dtype = value.is_string() ? dtype_from_name(value.get<std::string>()) : std::nullopt;
        if (!dtype) fail(rule, "\"dtype\" names an element type (f32, f16, i8, u8, i32, i64, ...)");
      } else if (key == "rank" || key == "min_elements" || key == "max_elements") {
        if (!value.is_number_integer() || value.get<std::int64_t>() < 0) {
          fail(rule, fmt::format("\"{}\" is a non-negative integer", key));
        }
        (key == "rank"           ? rank
         : key == "min_elements" ? min_elements
                                 : max_elements) = value.get<std::int64_t>();
      } else {
        fail(rule, fmt::format("unknown predicate key {} (attributes, dtype, rank, "
                               "min_elements, max_elements)",
                               quote_untrusted(key)));
      }
    }
    return [=](const Graph& graph, const Node& node) {
      for (const auto& [name, expected] : attributes) {
        auto it = node.attributes.all().find(name);
        if (it == node.attributes.all().end() || !same_attribute(it->second, expected)) {
          return false;
        }
      }
      if (node.outputs.empty()) return !dtype && !rank && !min_elements && !max_elements;
      const TensorType& type = graph.type(node.outputs.front());
      if (dtype && type.dtype != *dtype) return false;
      if (rank && type.rank() != *rank) return false;
      if (min_elements || max_elements) {
        std::int64_t elements = type.numel();
        if (min_elements && elements < *min_elements) return false;
        if (max_elements && elements > *max_elements) return false;
      }
      return true;
    };
  }

  AttributeValue attribute_value(const Json& value, const std::string& rule,
                                 const std::string& name) const {
    if (value.is_number_integer()) return value.get<std::int64_t>();
    if (value.is_number_float()) return value.get<float>();
    if (value.is_string()) return value.get<std::string>();
    if (value.is_array() && std::all_of(value.begin(), value.end(),
                                        [](const Json& v) { return v.is_number_integer(); })) {
      return value.get<std::vector<std::int64_t>>();
    }
    fail(rule, fmt::format("attribute {}: expected an integer, a number, a string or a list of "
                           "integers",
                           quote_untrusted(name)));
  }

  std::string origin_;
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
  if (!is_backend_name(rule.backend)) throw Error("names no backend after '='", {.field = field});
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
  if (colon == std::string::npos || !is_backend_name(text.substr(0, colon)) ||
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
  PatternReader reader(origin);
  Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) reader.fail("", "is not JSON");
  if (!json.is_object() || !json.contains("patterns") || !json.at("patterns").is_array()) {
    reader.fail("", "expected an object with \"patterns\": a list of rules");
  }
  std::set<std::pair<std::string, std::string>> names;
  for (const CustomPattern& known : patterns_) names.emplace(known.backend, known.name);
  for (const Json& entry : json.at("patterns")) {
    if (!entry.is_object()) reader.fail("", "each rule is an object");
    std::string name = entry.contains("name") && entry.at("name").is_string()
                           ? entry.at("name").get<std::string>()
                           : "";
    if (!is_backend_name(name)) {
      reader.fail(name, "a rule needs \"name\": letters, digits, '_' and '-'");
    }
    for (const auto& [key, value] : entry.items()) {
      if (key != "name" && key != "backend" && key != "pattern") {
        reader.fail(name,
                    fmt::format("unknown key {} (name, backend, pattern)", quote_untrusted(key)));
      }
    }
    if (!entry.contains("backend") || !entry.at("backend").is_string() ||
        !is_backend_name(entry.at("backend").get<std::string>())) {
      reader.fail(name, "a rule needs \"backend\": the backend it is for");
    }
    if (!entry.contains("pattern")) reader.fail(name, "a rule needs \"pattern\"");
    CustomPattern pattern{entry.at("backend").get<std::string>(), name,
                          reader.read(entry.at("pattern"), name), entry.dump()};
    if (!names.emplace(pattern.backend, pattern.name).second) {
      reader.fail(name, "is given twice for " + pattern.backend);
    }
    patterns_.push_back(std::move(pattern));
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

std::vector<PartitionSpecPtr> Placement::pinned_specs(
    const std::vector<PartitionSpecPtr>& specs, const std::vector<std::string>& present) const {
  std::vector<PartitionSpecPtr> pinned;
  for (const PartitionSpecPtr& spec : specs) {
    if (std::find(present.begin(), present.end(), spec->name) != present.end()) continue;
    bool has_pins = std::any_of(rules_.begin(), rules_.end(), [&](const PlacementRule& rule) {
      return rule.kind == PlacementRule::Kind::kPin && rule.backend == spec->name;
    });
    if (has_pins) pinned.push_back(constrain(spec, /*pinned_only=*/true));
  }
  return pinned;
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
