#include "collage/ir/pattern_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "collage/ir/error.h"

namespace collage {
namespace {

using Json = nlohmann::json;

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

bool is_plain_name(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

std::vector<PatternRuleJson> read_pattern_rules(const std::string& text, const std::string& origin,
                                                const std::string& default_backend) {
  PatternReader reader(origin);
  Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) reader.fail("", "is not JSON");
  if (!json.is_object() || !json.contains("patterns") || !json.at("patterns").is_array()) {
    reader.fail("", "expected an object with \"patterns\": a list of rules");
  }
  std::vector<PatternRuleJson> rules;
  for (const Json& entry : json.at("patterns")) {
    if (!entry.is_object()) reader.fail("", "each rule is an object");
    std::string name = entry.contains("name") && entry.at("name").is_string()
                           ? entry.at("name").get<std::string>()
                           : "";
    if (!is_plain_name(name)) {
      reader.fail(name, "a rule needs \"name\": letters, digits, '_' and '-'");
    }
    for (const auto& [key, value] : entry.items()) {
      if (key != "name" && key != "backend" && key != "pattern") {
        reader.fail(name,
                    fmt::format("unknown key {} (name, backend, pattern)", quote_untrusted(key)));
      }
    }
    std::string backend = default_backend;
    if (entry.contains("backend")) {
      const Json& given = entry.at("backend");
      backend = given.is_string() ? given.get<std::string>() : "";
      if (!is_plain_name(backend)) reader.fail(name, "\"backend\" names a backend");
    }
    if (backend.empty()) reader.fail(name, "a rule needs \"backend\": the backend it is for");
    if (!entry.contains("pattern")) reader.fail(name, "a rule needs \"pattern\"");
    rules.push_back(
        PatternRuleJson{name, backend, reader.read(entry.at("pattern"), name), entry.dump()});
  }
  return rules;
}

}  // namespace collage
