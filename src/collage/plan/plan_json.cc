#include "collage/plan/plan_json.h"

#include <fmt/format.h>

#include <cassert>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "collage/ir/error.h"
#include "collage/ir/file_io.h"

namespace collage {
namespace {

using nlohmann::json;

json optional_number(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

// Reads typed fields of one JSON object, turning every mismatch into an Error
// that names the file and the field.
class Reader {
 public:
  Reader(const json& object, std::string source, std::string path)
      : object_(object), source_(std::move(source)), path_(std::move(path)) {
    if (!object_.is_object()) fail("", "expected an object");
  }

  template <typename T>
  T get(const std::string& key) const {
    auto it = object_.find(key);
    if (it == object_.end()) fail(key, "missing");
    // JSON converts numbers silently: 2.5 or 1e300 would become an int
    // (the latter undefined behaviour). An integer field takes an integer
    // in range, nothing else.
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (!it->is_number_integer()) fail(key, "is not an integer");
      const bool in_range = it->is_number_unsigned()
                                ? std::in_range<T>(it->template get<std::uint64_t>())
                                : std::in_range<T>(it->template get<std::int64_t>());
      if (!in_range) {
        fail(key, "is out of range");
      }
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (it->is_number() && !std::isfinite(it->template get<double>())) {
        fail(key, "is not a finite number");
      }
    }
    try {
      return it->get<T>();
    } catch (const json::exception&) {
      fail(key, "has the wrong type");
    }
  }
  template <typename T>
  T get_or(const std::string& key, T fallback) const {
    if (!object_.contains(key) || object_.at(key).is_null()) return fallback;
    return get<T>(key);
  }
  std::optional<double> number(const std::string& key) const {
    if (!object_.contains(key) || object_.at(key).is_null()) return std::nullopt;
    return get<double>(key);
  }
  const json& array(const std::string& key) const {
    auto it = object_.find(key);
    if (it == object_.end() || !it->is_array()) fail(key, "missing or not an array");
    return *it;
  }
  const json& object(const std::string& key) const {
    auto it = object_.find(key);
    if (it == object_.end() || !it->is_object()) fail(key, "missing or not an object");
    return *it;
  }
  Reader child(const json& value, const std::string& name) const {
    const bool joined = path_.empty() || name.starts_with('.');
    return Reader(value, source_, joined ? path_ + name : path_ + "." + name);
  }

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    std::string field = path_.empty() ? key : (key.empty() ? path_ : path_ + "." + key);
    throw Error(what, {.file = source_, .field = field});
  }

 private:
  const json& object_;
  std::string source_;
  std::string path_;
};

}  // namespace

json plan_to_json(const Plan& plan) {
  json partitions = json::array();
  for (const PlanPartition& p : plan.partitions) {
    json alternatives = json::array();
    for (const PlanAlternative& a : p.alternatives) {
      json entry = {{"backend", a.backend},
                    {"rule", a.rule},
                    {"node_count", a.node_count},
                    {"estimated_ms", optional_number(a.estimated_ms)}};
      if (!a.reason.empty()) entry["reason"] = a.reason;
      alternatives.push_back(entry);
    }
    partitions.push_back({{"backend", p.backend},
                          {"rule", p.rule},
                          {"nodes", p.nodes},
                          {"ops", p.ops},
                          {"inputs", p.inputs},
                          {"outputs", p.outputs},
                          {"estimated_ms", optional_number(p.estimated_ms)},
                          {"measured_ms", optional_number(p.measured_ms)},
                          {"alternatives", alternatives}});
  }
  json shapes = json::object();
  for (const auto& [name, shape] : plan.input_shapes) shapes[name] = shape;
  json document = {{"format", "collage-plan"},
                   {"version", kPlanFormatVersion},
                   {"strategy", plan.strategy},
                   {"model",
                    {{"path", plan.model_path},
                     {"hash", plan.model_hash},
                     {"input_shapes", shapes},
                     {"graph_opt", plan.graph_opt}}},
                   {"machine", plan.machine},
                   {"threads", plan.threads},
                   {"backends", plan.backend_versions},
                   {"compute_layouts", plan.compute_layouts},
                   {"estimated_ms", optional_number(plan.estimated_ms)},
                   {"measured_ms", optional_number(plan.measured_ms)},
                   {"search",
                    {{"candidates", plan.search.candidates},
                     {"measured", plan.search.measured},
                     {"cache_hits", plan.search.cache_hits},
                     {"invalid", plan.search.invalid},
                     {"states_expanded", plan.search.states_expanded},
                     {"routes_dropped", plan.search.routes_dropped},
                     {"seconds", plan.search.seconds},
                     {"moves_tried", plan.search.moves_tried},
                     {"moves_kept", plan.search.moves_kept},
                     {"moves_start", plan.search.moves_start},
                     {"screened", plan.search.screened},
                     {"ruled_out", plan.search.ruled_out}}},
                   {"partitions", partitions}};
  if (!plan.placement.empty()) document["placement"] = plan.placement;
  if (!plan.search.layout.empty()) document["search"]["layout"] = plan.search.layout;
  if (!plan.search.failed_backends.empty()) {
    document["search"]["failed_backends"] = plan.search.failed_backends;
  }
  if (!plan.bodies.empty()) {
    json bodies = json::array();
    for (const PlanBody& body : plan.bodies) {
      bodies.push_back({{"node", body.node},
                        {"index", body.index},
                        {"name", body.name},
                        {"plan", plan_to_json(body.plan)}});
    }
    document["bodies"] = bodies;
  }
  if (!plan.verification.empty()) {
    json rows = json::array();
    for (const PlanStrategyTiming& row : plan.verification) {
      rows.push_back({{"strategy", row.strategy},
                      {"median_ms", row.median_ms},
                      {"p10_ms", row.p10_ms},
                      {"p90_ms", row.p90_ms},
                      {"outputs_match", row.outputs_match}});
    }
    document["verification"] = rows;
  }
  return document;
}

namespace {

// Bodies nest as deep as the model's control flow; a file nesting deeper
// than this is refused rather than read by ever deeper recursion.
constexpr int kMaxBodyDepth = 16;

Plan plan_from_json_at(const json& document, const std::string& source, const std::string& path,
                       int depth = 0) {
  Reader top(document, source, path);
  if (top.get<std::string>("format") != "collage-plan") top.fail("format", "is not 'collage-plan'");
  if (int version = top.get<int>("version"); version != kPlanFormatVersion) {
    top.fail("version",
             fmt::format("is {}, this build reads version {}", version, kPlanFormatVersion));
  }
  Plan plan;
  plan.strategy = top.get<std::string>("strategy");
  Reader model = top.child(top.object("model"), "model");
  plan.model_path = model.get_or<std::string>("path", "");
  plan.model_hash = model.get_or<std::string>("hash", "");
  plan.input_shapes = model.get_or<std::map<std::string, Shape>>("input_shapes", {});
  plan.graph_opt = model.get_or<std::string>("graph_opt", "all");
  plan.machine = top.get_or<std::string>("machine", "");
  plan.threads = top.get_or<int>("threads", 1);
  plan.backend_versions = top.get_or<std::map<std::string, std::string>>("backends", {});
  plan.compute_layouts = top.get_or<std::map<std::string, std::string>>("compute_layouts", {});
  plan.estimated_ms = top.number("estimated_ms");
  plan.measured_ms = top.number("measured_ms");
  plan.placement = top.get_or<std::vector<std::string>>("placement", {});
  if (document.contains("verification")) {
    const json& rows = top.array("verification");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      Reader row = top.child(rows[i], fmt::format("verification[{}]", i));
      plan.verification.push_back(
          PlanStrategyTiming{row.get<std::string>("strategy"), row.get<double>("median_ms"),
                             row.get_or<double>("p10_ms", 0), row.get_or<double>("p90_ms", 0),
                             row.get_or<bool>("outputs_match", true)});
    }
  }
  if (document.contains("search")) {
    Reader search = top.child(top.object("search"), "search");
    plan.search.candidates = search.get_or<int>("candidates", 0);
    plan.search.measured = search.get_or<int>("measured", 0);
    plan.search.cache_hits = search.get_or<int>("cache_hits", 0);
    plan.search.invalid = search.get_or<int>("invalid", 0);
    plan.search.states_expanded = search.get_or<int>("states_expanded", 0);
    plan.search.routes_dropped = search.get_or<int>("routes_dropped", 0);
    plan.search.seconds = search.get_or<double>("seconds", 0);
    plan.search.moves_tried = search.get_or<int>("moves_tried", 0);
    plan.search.moves_kept = search.get_or<int>("moves_kept", 0);
    plan.search.moves_start = search.get_or<std::string>("moves_start", "");
    plan.search.screened = search.get_or<int>("screened", 0);
    plan.search.ruled_out = search.get_or<int>("ruled_out", 0);
    plan.search.failed_backends = search.get_or<std::vector<std::string>>("failed_backends", {});
    plan.search.layout = search.get_or<std::string>("layout", "");
  }
  const json& partitions = top.array("partitions");
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    Reader p = top.child(partitions[i], fmt::format("partitions[{}]", i));
    PlanPartition partition;
    partition.backend = p.get<std::string>("backend");
    partition.rule = p.get_or<std::string>("rule", "");
    partition.nodes = p.get<std::vector<std::string>>("nodes");
    if (partition.nodes.empty()) p.fail("nodes", "is empty");
    partition.ops = p.get_or<std::vector<std::string>>("ops", {});
    partition.inputs = p.get_or<std::vector<std::string>>("inputs", {});
    partition.outputs = p.get_or<std::vector<std::string>>("outputs", {});
    partition.estimated_ms = p.number("estimated_ms");
    partition.measured_ms = p.number("measured_ms");
    if (partitions[i].contains("alternatives")) {
      const json& alternatives = p.array("alternatives");
      for (std::size_t j = 0; j < alternatives.size(); ++j) {
        Reader a = p.child(alternatives[j], fmt::format(".alternatives[{}]", j));
        partition.alternatives.push_back(
            PlanAlternative{a.get<std::string>("backend"), a.get_or<std::string>("rule", ""),
                            a.get_or<int>("node_count", 0), a.number("estimated_ms"),
                            a.get_or<std::string>("reason", "")});
      }
    }
    plan.partitions.push_back(std::move(partition));
  }
  if (document.contains("bodies")) {
    const json& bodies = top.array("bodies");
    if (!bodies.empty() && depth >= kMaxBodyDepth) {
      top.fail("bodies", fmt::format("nest deeper than {} levels", kMaxBodyDepth));
    }
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      const std::string at = fmt::format("bodies[{}]", i);
      Reader b = top.child(bodies[i], at);
      PlanBody body;
      body.node = b.get<std::string>("node");
      body.index = b.get<std::size_t>("index");
      body.name = b.get_or<std::string>("name", "");
      body.plan = plan_from_json_at(b.object("plan"), source,
                                    (path.empty() ? at : path + "." + at) + ".plan", depth + 1);
      for (const PlanBody& earlier : plan.bodies) {
        if (earlier.node == body.node && earlier.index == body.index) {
          b.fail("", fmt::format("plans body {} of node {} again", body.index,
                                 quote_untrusted(body.node)));
        }
      }
      plan.bodies.push_back(std::move(body));
    }
  }
  return plan;
}

json parse_plan_file(const std::string& path) {
  // A plan is a few hundred kilobytes; 64 MiB bounds what a wrong file costs.
  const std::string text = read_regular_file(path, std::int64_t{64} << 20);
  // An ONNX model is a protobuf whose first field is ir_version (tag 0x08);
  // a plan is JSON and starts with '{' (after white space).
  if (!text.empty() && text[0] == '\x08') {
    throw Error(
        "this looks like an ONNX model, not a plan: make a plan with `collage tune MODEL -o "
        "PLAN.json`, then pass the plan",
        {.file = path});
  }
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    // Parse errors (and numbers out of range, such as 1e999) quote the text
    // they stopped at: cut and escaped like any text from a file.
    throw Error("not valid JSON: " + quote_untrusted(e.what(), 200), {.file = path});
  }
}

}  // namespace

Plan plan_from_json(const json& document, const std::string& source) {
  return plan_from_json_at(document, source, "");
}

json plans_to_json(const std::vector<Plan>& plans) {
  assert(!plans.empty() && "a plan file holds at least one plan");
  if (plans.size() == 1) return plan_to_json(plans.front());
  json entries = json::array();
  for (const Plan& plan : plans) entries.push_back(plan_to_json(plan));
  return {{"format", "collage-plan-set"}, {"version", kPlanFormatVersion}, {"plans", entries}};
}

std::vector<Plan> plans_from_json(const json& document, const std::string& source) {
  if (!document.is_object() || document.value("format", json()) != "collage-plan-set")
    return {plan_from_json(document, source)};
  Reader top(document, source, "");
  if (int version = top.get<int>("version"); version != kPlanFormatVersion) {
    top.fail("version",
             fmt::format("is {}, this build reads version {}", version, kPlanFormatVersion));
  }
  const json& entries = top.array("plans");
  if (entries.empty()) top.fail("plans", "is empty");
  std::vector<Plan> plans;
  std::vector<std::map<std::string, Shape>> shapes;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    plans.push_back(plan_from_json_at(entries[i], source, fmt::format("plans[{}]", i)));
    shapes.push_back(plans.back().input_shapes);
  }
  if (auto repeat = first_repeated_shapes(shapes)) {
    top.fail(
        fmt::format("plans[{}].model.input_shapes", repeat->second),
        fmt::format("are those of plans[{}]: a plan set holds one plan per shape", repeat->first));
  }
  return plans;
}

void save_plan(const Plan& plan, const std::string& path) {
  write_file_atomically(path, plan_to_json(plan).dump(2) + "\n");
}

Plan load_plan(const std::string& path) {
  std::vector<Plan> plans = load_plans(path);
  if (plans.size() == 1) return std::move(plans.front());
  throw Error(
      fmt::format("holds plans for {} input shapes, where one plan is expected", plans.size()),
      {.file = path});
}

void save_plans(const std::vector<Plan>& plans, const std::string& path) {
  write_file_atomically(path, plans_to_json(plans).dump(2) + "\n");
}

std::vector<Plan> load_plans(const std::string& path) {
  return plans_from_json(parse_plan_file(path), path);
}

}  // namespace collage
