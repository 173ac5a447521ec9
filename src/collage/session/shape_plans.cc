#include "collage/session/shape_plans.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <limits>
#include <utility>

#include "collage/ir/error.h"
#include "collage/session/model_loading.h"
#include "collage/session/resources.h"

namespace collage {
namespace {

// The shapes the caller gives: --input-shape over the data's. A data shape
// for "the only input" takes the one name the plans fix, when they fix one.
std::map<std::string, Shape> wanted_shapes(const PrepareOptions& options,
                                           const std::vector<Plan>& plans) {
  std::map<std::string, Shape> shapes = options.input_shapes;
  for (const auto& [name, shape] : options.data_shapes) {
    if (!name.empty()) {
      shapes.emplace(name, shape);
      continue;
    }
    if (plans.front().input_shapes.size() == 1)
      shapes.emplace(plans.front().input_shapes.begin()->first, shape);
  }
  return shapes;
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

std::string shapes_text(const std::map<std::string, Shape>& shapes) {
  return shapes.empty() ? "the model's own shapes" : shapes_to_string(shapes);
}

std::string plan_shapes_text(const std::vector<Plan>& plans) {
  std::vector<std::string> texts;
  for (const Plan& plan : plans) texts.push_back(shapes_text(plan.input_shapes));
  return fmt::format("{}", fmt::join(texts, "; "));
}

std::optional<std::size_t> plan_for_shapes(const std::vector<Plan>& plans,
                                           const std::map<std::string, Shape>& shapes) {
  for (std::size_t i = 0; i < plans.size(); ++i) {
    bool fits = true;
    for (const auto& [name, shape] : shapes) {
      auto fixed = plans[i].input_shapes.find(name);
      if (fixed != plans[i].input_shapes.end() && fixed->second != shape) fits = false;
    }
    if (fits) return i;
  }
  return std::nullopt;
}

std::size_t closest_plan(const std::vector<Plan>& plans,
                         const std::map<std::string, Shape>& shapes) {
  std::size_t best = 0;
  double best_distance = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < plans.size(); ++i) {
    double distance = 0;
    for (const auto& [name, shape] : shapes) {
      auto fixed = plans[i].input_shapes.find(name);
      if (fixed == plans[i].input_shapes.end()) continue;
      if (fixed->second.size() != shape.size()) {
        distance = std::numeric_limits<double>::max();
        break;
      }
      for (std::size_t axis = 0; axis < shape.size(); ++axis) {
        // +1 keeps a size of 0 finite.
        distance += std::abs(std::log(static_cast<double>(shape[axis]) + 1) -
                             std::log(static_cast<double>(fixed->second[axis]) + 1));
      }
    }
    if (distance < best_distance) {
      best = i;
      best_distance = distance;
    }
  }
  return best;
}

PreparedModel prepare_for_shapes(const std::string& path, const std::optional<std::string>& bytes,
                                 PrepareOptions options, const std::vector<Plan>& plans) {
  assert(!plans.empty() && "prepare_for_shapes needs a plan");
  const std::map<std::string, Shape> wanted = wanted_shapes(options, plans);
  if (std::optional<std::size_t> index = plan_for_shapes(plans, wanted)) {
    options.plan = plans[*index];
    return prepare_model(path, bytes, options);
  }
  const auto start = std::chrono::steady_clock::now();
  const Plan& closest = plans[closest_plan(plans, wanted)];
  const std::string preamble = fmt::format("{}: no plan for {} (plans for {})", options.plan_source,
                                           shapes_text(wanted), plan_shapes_text(plans));
  PrepareOptions recompile = options;
  recompile.plan = closest;
  recompile.plan_for_other_shapes = true;
  try {
    PreparedModel prepared = prepare_model(path, bytes, recompile);
    prepared.warnings.push_back(escape_control(
        fmt::format("{}; ran the plan for {} compiled for {} ({:.0f} ms)", preamble,
                    shapes_text(closest.input_shapes),
                    shapes_text(dynamic_input_shapes(prepared.graph)), milliseconds_since(start))));
    return prepared;
  } catch (const Error& error) {
    PrepareOptions native = options;
    native.plan.reset();
    native.strategy = "native";
    native.graph_opt = closest.graph_opt;
    if (native.threads == 0) native.threads = std::clamp(closest.threads, 1, max_threads());
    PreparedModel prepared = prepare_model(path, bytes, native);
    prepared.warnings.push_back(escape_control(fmt::format(
        "{}; the plan for {} does not fit {} ({}), so the native kernels run it ({:.0f} ms)",
        preamble, shapes_text(closest.input_shapes),
        shapes_text(dynamic_input_shapes(prepared.graph)), error.message(),
        milliseconds_since(start))));
    return prepared;
  }
}

}  // namespace collage
