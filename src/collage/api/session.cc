// collage::Session (include/collage/session.h) over session/prepared_model.h.
#include "collage/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <list>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "collage/api/conversions.h"
#include "collage/ir/error.h"
#include "collage/plan/plan_json.h"
#include "collage/session/prepared_model.h"
#include "collage/session/shape_plans.h"

namespace collage {

// Fallback models kept at once, for shapes no plan was made for: a service
// that sees many such shapes compiles the oldest again rather than keep
// every one.
constexpr std::size_t kMaxFallbackModels = 8;

struct Session::Impl {
  // `plans`: the plans of the plan file or JSON given, empty for a strategy.
  Impl(std::string model_path, std::optional<std::string> model_bytes, PrepareOptions options,
       std::vector<Plan> plans)
      : path(std::move(model_path)), bytes(std::move(model_bytes)), base(std::move(options)) {
    if (plans.empty()) {
      models.push_back(prepare_model(path, bytes, base));
      this->plans = {models.back().plan};
      // What a warning about other shapes names the plan by.
      base.plan_source = "the " + base.strategy + " plan";
    } else {
      this->plans = std::move(plans);
      prepare_plans();
    }
    for (const PreparedModel& model : models) add_warnings(model);
    for (ValueId id : primary().graph.inputs()) inputs.push_back(info(id));
    for (ValueId id : primary().graph.outputs()) outputs.push_back(info(id));
  }

  // Compiles every plan of a plan set, each at its own shapes, and makes the
  // one for the caller's input_shapes the primary (a fallback when none is).
  void prepare_plans() {
    if (plans.size() == 1) {
      models.push_back(prepare_for_shapes(path, bytes, base, plans));
      return;
    }
    for (const Plan& plan : plans) {
      PrepareOptions own = base;
      own.input_shapes.clear();
      own.plan = plan;
      models.push_back(prepare_model(path, bytes, own));
    }
    if (base.input_shapes.empty()) return;
    std::optional<std::size_t> index = plan_for_shapes(plans, base.input_shapes);
    if (!index) {
      models.push_front(prepare_for_shapes(path, bytes, base, plans));
      return;
    }
    auto chosen = std::next(models.begin(), static_cast<std::ptrdiff_t>(*index));
    models.splice(models.begin(), models, chosen);
  }

  // The first model: the one whose shapes inputs() and outputs() describe.
  const PreparedModel& primary() const { return models.front(); }

  ValueInfo info(ValueId id) const {
    const Graph& graph = primary().graph;
    const Value& value = graph.value(id);
    ValueInfo result{value.name, value.type.dtype, value.type.shape, {}};
    for (const OpenDim& dim : graph.dynamic_dims) {
      if (dim.input != value.name) continue;
      result.open_dims.resize(value.type.shape.size());
      result.open_dims[static_cast<std::size_t>(dim.axis)] = dim.param.empty() ? "?" : dim.param;
    }
    return result;
  }

  void add_warnings(const PreparedModel& model) {
    for (const std::string& warning : model.warnings) {
      if (std::find(warnings.begin(), warnings.end(), warning) == warnings.end())
        warnings.push_back(warning);
    }
  }

  // The model compiled for the shapes of `given`: a plan's, a fallback made
  // before, or a fallback made now (with a warning) when the shapes differ
  // from the primary's only in dimensions the model leaves dynamic. Any
  // other mismatch goes to the primary, whose run reports it.
  PreparedModel& model_for(const std::map<std::string, Array>& given) {
    for (auto it = models.begin(); it != models.end(); ++it) {
      if (fits(it->graph, given)) return *it;
    }
    if (!differs_in_dynamic_dims_only(given)) return models.front();
    PrepareOptions options = base;
    options.input_shapes.clear();
    for (const ValueInfo& input : inputs) {
      auto found = given.find(input.name);
      if (found != given.end()) options.data_shapes[input.name] = found->second.dims();
    }
    models.push_back(prepare_for_shapes(path, bytes, options, plans));
    add_warnings(models.back());
    if (++fallbacks > kMaxFallbackModels) {
      models.erase(
          std::next(models.begin(), static_cast<std::ptrdiff_t>(models.size() - fallbacks)));
      --fallbacks;
    }
    return models.back();
  }

  static bool fits(const Graph& graph, const std::map<std::string, Array>& given) {
    for (ValueId id : graph.inputs()) {
      auto found = given.find(graph.value(id).name);
      if (found != given.end() && found->second.dims() != graph.type(id).shape) return false;
    }
    return true;
  }

  bool differs_in_dynamic_dims_only(const std::map<std::string, Array>& given) const {
    return std::all_of(inputs.begin(), inputs.end(), [&](const ValueInfo& input) {
      auto found = given.find(input.name);
      return found == given.end() || input.takes(found->second.dims());
    });
  }

  std::string path;
  // A session made from bytes keeps them, to compile fallbacks.
  std::optional<std::string> bytes;
  PrepareOptions base;
  std::vector<Plan> plans;
  // The primary first, then the other plans' models, then the fallbacks
  // run() made (the last `fallbacks`; the primary is never dropped).
  std::list<PreparedModel> models;
  std::size_t fallbacks = 0;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::vector<std::string> warnings;
  // A compiled plan owns the buffers between its partitions: one run at a time.
  mutable std::mutex running;
};

namespace {

// The session's options as prepare_model takes them, and the plans given
// (empty for a strategy).
std::pair<PrepareOptions, std::vector<Plan>> prepare_options(const SessionOptions& options) {
  PrepareOptions prepare;
  std::vector<Plan> plans;
  if (!options.plan_file.empty() && !options.plan_json.empty()) {
    throw Error("give plan_file or plan_json, not both", {.field = "plan"});
  }
  if (!options.plan_file.empty()) {
    plans = load_plans(options.plan_file);
    prepare.plan_source = options.plan_file;
  } else if (!options.plan_json.empty()) {
    nlohmann::json json = nlohmann::json::parse(options.plan_json, nullptr, false);
    if (json.is_discarded()) throw Error("is not JSON", {.field = "plan_json"});
    plans = plans_from_json(json, "plan_json");
    prepare.plan_source = "plan_json";
  }
  prepare.strategy = options.strategy;
  prepare.threads = options.threads;
  prepare.input_shapes = options.input_shapes;
  prepare.graph_opt = options.graph_opt;
  prepare.max_memory = options.max_memory;
  return {std::move(prepare), std::move(plans)};
}

}  // namespace

Session::Session(const std::string& model_path, const SessionOptions& options)
    : impl_(api::one_error_type([&] {
        auto [prepare, plans] = prepare_options(options);
        return std::make_unique<Impl>(model_path, std::nullopt, std::move(prepare),
                                      std::move(plans));
      })) {}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Session Session::from_bytes(const std::string& model_bytes, const SessionOptions& options) {
  return Session(api::one_error_type([&] {
    auto [prepare, plans] = prepare_options(options);
    return std::make_unique<Impl>("model bytes", model_bytes, std::move(prepare), std::move(plans));
  }));
}

Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

const std::vector<ValueInfo>& Session::inputs() const { return impl_->inputs; }
const std::vector<ValueInfo>& Session::outputs() const { return impl_->outputs; }

std::map<std::string, Array> Session::run(const std::map<std::string, Array>& inputs) {
  std::map<std::string, Array> outputs;
  run(inputs, outputs);
  return outputs;
}

void Session::run(const std::map<std::string, Array>& inputs,
                  std::map<std::string, Array>& outputs) {
  api::one_error_type([&] {
    std::map<std::string, Tensor> in = api::to_tensors(inputs);
    std::map<std::string, Tensor> out = api::to_tensors(outputs);
    {
      std::lock_guard<std::mutex> lock(impl_->running);
      impl_->model_for(inputs).executor.run_into(in, out);
    }
    for (const auto& [name, tensor] : out) {
      if (outputs.count(name) == 0) outputs.emplace(name, api::to_array(tensor));
    }
  });
}

std::string Session::plan_json() const { return plans_to_json(impl_->plans).dump(2); }
std::string Session::strategy() const { return impl_->primary().plan.strategy; }
int Session::threads() const { return impl_->primary().threads; }
std::map<std::string, int> Session::partitions() const {
  return impl_->primary().plan.partitions_per_backend();
}
std::vector<std::string> Session::warnings() const {
  std::lock_guard<std::mutex> lock(impl_->running);
  return impl_->warnings;
}

}  // namespace collage
