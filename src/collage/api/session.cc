// collage::Session (include/collage/session.h) over session/prepared_model.h.
#include "collage/session.h"

#include <fmt/format.h>

#include <mutex>
#include <nlohmann/json.hpp>

#include "collage/api/conversions.h"
#include "collage/ir/error.h"
#include "collage/plan/plan_json.h"
#include "collage/session/prepared_model.h"

namespace collage {

struct Session::Impl {
  explicit Impl(PreparedModel model) : prepared(std::move(model)) {
    for (ValueId id : prepared.graph.inputs()) inputs.push_back(info(id));
    for (ValueId id : prepared.graph.outputs()) outputs.push_back(info(id));
  }

  ValueInfo info(ValueId id) const {
    const Value& value = prepared.graph.value(id);
    ValueInfo result{value.name, value.type.dtype, value.type.shape, {}};
    for (const OpenDim& dim : prepared.graph.open_dims) {
      if (dim.input != value.name) continue;
      result.open_dims.resize(value.type.shape.size());
      result.open_dims[static_cast<std::size_t>(dim.axis)] = dim.param.empty() ? "?" : dim.param;
    }
    return result;
  }

  PreparedModel prepared;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  // A compiled plan owns the buffers between its partitions: one run at a time.
  std::mutex running;
};

namespace {

PrepareOptions prepare_options(const SessionOptions& options) {
  PrepareOptions prepare;
  if (!options.plan_file.empty() && !options.plan_json.empty()) {
    throw Error("give plan_file or plan_json, not both", {.field = "plan"});
  }
  if (!options.plan_file.empty()) {
    prepare.plan = load_plan(options.plan_file);
    prepare.plan_source = options.plan_file;
  } else if (!options.plan_json.empty()) {
    nlohmann::json json = nlohmann::json::parse(options.plan_json, nullptr, false);
    if (json.is_discarded()) throw Error("is not JSON", {.field = "plan_json"});
    prepare.plan = plan_from_json(json, "plan_json");
    prepare.plan_source = "plan_json";
  }
  prepare.strategy = options.strategy;
  prepare.threads = options.threads;
  prepare.input_shapes = options.input_shapes;
  prepare.graph_opt = options.graph_opt;
  prepare.max_memory = options.max_memory;
  return prepare;
}

}  // namespace

Session::Session(const std::string& model_path, const SessionOptions& options)
    : impl_(api::one_error_type([&] {
        return std::make_unique<Impl>(
            prepare_model(model_path, std::nullopt, prepare_options(options)));
      })) {}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Session Session::from_bytes(const std::string& model_bytes, const SessionOptions& options) {
  return Session(api::one_error_type([&] {
    return std::make_unique<Impl>(
        prepare_model("model bytes", model_bytes, prepare_options(options)));
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

namespace {

// An input whose open dimension the session set to 1 (Graph::open_dims),
// given at another size: the error says why the session wants 1 and how to
// make one for the size given.
void check_open_dims(const Graph& graph, const std::map<std::string, Array>& inputs) {
  for (const OpenDim& dim : graph.open_dims) {
    auto given = inputs.find(dim.input);
    if (given == inputs.end()) continue;
    const Shape& shape = graph.type(*graph.find_value(dim.input)).shape;
    if (given->second.dims() == shape) continue;
    throw Error(
        fmt::format("has shape [{}], but the session was made for [{}]: dimension {}{} is dynamic "
                    "in the model and was set to {}; give its size in input_shapes when making "
                    "the session",
                    fmt::join(given->second.dims(), ","), fmt::join(shape, ","), dim.axis,
                    dim.param.empty() ? "" : " (" + quote_untrusted(dim.param) + ")", kOpenDimSize),
        {.field = "input " + quote_untrusted(dim.input)});
  }
}

}  // namespace

void Session::run(const std::map<std::string, Array>& inputs,
                  std::map<std::string, Array>& outputs) {
  api::one_error_type([&] {
    check_open_dims(impl_->prepared.graph, inputs);
    std::map<std::string, Tensor> in = api::to_tensors(inputs);
    std::map<std::string, Tensor> out = api::to_tensors(outputs);
    {
      std::lock_guard<std::mutex> lock(impl_->running);
      impl_->prepared.executor.run_into(in, out);
    }
    for (const auto& [name, tensor] : out) {
      if (outputs.count(name) == 0) outputs.emplace(name, api::to_array(tensor));
    }
  });
}

std::string Session::plan_json() const { return plan_to_json(impl_->prepared.plan).dump(2); }
std::string Session::strategy() const { return impl_->prepared.plan.strategy; }
int Session::threads() const { return impl_->prepared.threads; }
std::map<std::string, int> Session::partitions() const {
  return impl_->prepared.plan.partitions_per_backend();
}
std::vector<std::string> Session::warnings() const { return impl_->prepared.warnings; }

}  // namespace collage
