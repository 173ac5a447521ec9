#include "collage/cost/measurer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "collage/cost/cache_state.h"
#include "collage/ir/error.h"
#include "collage/runtime/random_inputs.h"

namespace collage {
namespace {

using nlohmann::json;

// Runs a kernel on inputs ordered like the partition's inputs, into fresh outputs.
std::vector<Tensor> run_once(Kernel& kernel, const Graph& partition,
                             const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outputs;
  for (ValueId id : partition.outputs()) outputs.push_back(Tensor::allocate(partition.type(id)));
  kernel.run(inputs, outputs);
  return outputs;
}

double element(const Tensor& t, std::int64_t i) { return t.number_at(i); }

// A second kernel of a candidate, with copies of its inputs and outputs:
// run before the candidate, it leaves the code warm but not the data.
struct Twin {
  std::shared_ptr<Kernel> kernel;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;

  static Twin of(std::unique_ptr<Kernel> kernel, const std::vector<Tensor>& inputs,
                 const std::vector<Tensor>& outputs) {
    Twin twin{std::move(kernel), {}, {}};
    for (const Tensor& t : inputs) twin.inputs.push_back(t.clone());
    for (const Tensor& t : outputs) twin.outputs.push_back(t.clone());
    return twin;
  }
  void run() {
    if (kernel) kernel->run(inputs, outputs);
  }
};

// How the caches are left before each timed call, for measurement_context:
// "" back to back.
std::string caches_protocol(const MeasureOptions& options) {
  if (!options.plan_caches) return "";
  std::string protocol = " caches=plan";
  if (options.twin_before) protocol += "-after-smaller-twin";
  if (options.edges == MeasureOptions::Edges::kInputsWritten) protocol += "-inputs-written";
  return protocol;
}

}  // namespace

std::string measurement_context(const std::string& machine, const MeasureOptions& options) {
  const TimingOptions& t = options.timing;
  std::string context = fmt::format(
      "{}|protocol warmup={},{:g}s samples={}..{} budget={:g}s stable={:g} min_sample={:g}s "
      "rtol={:g} atol={:g} nonfinite=exact edges=preferred cost=trimmed-mean{}",
      machine, t.warmup_runs, t.warmup_seconds, t.min_samples, t.max_samples, t.budget_seconds,
      t.stable_fraction, t.min_sample_seconds, options.rtol, options.atol,
      caches_protocol(options));
  context += "|env";
  for (const char* name :
       {"GOMP_SPINCOUNT", "OMP_WAIT_POLICY", "OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY"}) {
    const char* value = std::getenv(name);
    if (value != nullptr) context += fmt::format(" {}={}", name, value);
  }
  return context;
}

std::string screen_context(const MeasureOptions& options) {
  const TimingOptions& t = options.screen_timing;
  return fmt::format("screen warmup={},{:g}s samples={}..{} budget={:g}s cost=fastest",
                     t.warmup_runs, t.warmup_seconds, t.min_samples, t.max_samples,
                     t.budget_seconds);
}

std::string candidate_context(const Graph& model, const std::vector<NodeId>& nodes,
                              const MeasureOptions& options) {
  if (!options.plan_caches) return "";
  return fmt::format("evict={}", eviction_bytes(model, nodes, options.threads));
}

TimingOptions MeasureOptions::default_candidate_timing() {
  TimingOptions timing;
  timing.warmup_runs = 2;
  timing.warmup_seconds = 0.01;
  timing.min_samples = 5;
  timing.max_samples = 50;
  timing.budget_seconds = 0.3;
  timing.stable_fraction = 0.03;
  return timing;
}

TimingOptions MeasureOptions::default_screen_timing() {
  TimingOptions timing;
  timing.warmup_runs = 1;
  timing.warmup_seconds = 0;
  timing.min_samples = 3;
  timing.max_samples = 3;
  timing.budget_seconds = 0;
  return timing;
}

std::optional<std::string> compare_outputs(const Tensor& actual, const Tensor& expected,
                                           double rtol, double atol, double relative_rms) {
  if (actual.type() != expected.type()) {
    return fmt::format("output type {} differs from the reference's {}", actual.type().to_string(),
                       expected.type().to_string());
  }
  if (expected.dtype() == DType::kFloat16) return std::nullopt;
  // Infinities are legitimate values (a -inf attention mask, a log of 0):
  // they must match exactly and do not widen the tolerance. A NaN matches a
  // NaN.
  double largest = 0;
  for (std::int64_t i = 0; i < expected.numel(); ++i) {
    double e = std::abs(element(expected, i));
    if (std::isfinite(e)) largest = std::max(largest, e);
  }
  double tolerance = atol + rtol * largest;
  if (expected.dtype() == DType::kInt8 || expected.dtype() == DType::kUInt8) {
    tolerance = std::max(tolerance, 1.0);
  }
  double worst = 0;
  std::int64_t worst_at = -1;
  double squared_difference = 0;
  double squared_expected = 0;
  for (std::int64_t i = 0; i < expected.numel(); ++i) {
    double a = element(actual, i);
    double e = element(expected, i);
    double diff = 0;
    if (std::isnan(a) || std::isnan(e)) {
      diff = std::isnan(a) && std::isnan(e) ? 0 : INFINITY;
    } else if (std::isinf(a) || std::isinf(e)) {
      diff = a == e ? 0 : INFINITY;
    } else {
      diff = std::abs(a - e);
      squared_expected += e * e;
    }
    squared_difference += diff * diff;
    if (diff > worst) {
      worst = diff;
      worst_at = i;
    }
  }
  if (worst <= tolerance) return std::nullopt;
  const double rms_ratio = squared_expected > 0 ? std::sqrt(squared_difference / squared_expected)
                                                : static_cast<double>(INFINITY);
  if (relative_rms > 0 && std::isfinite(worst) && rms_ratio <= relative_rms) return std::nullopt;
  if (relative_rms > 0) {
    return fmt::format(
        "outputs differ from the reference: |diff| {:.3g} at element {} (tolerance {:.3g}), "
        "RMS difference {:.3g} of the output's (tolerance {:.3g})",
        worst, worst_at, tolerance, rms_ratio, relative_rms);
  }
  return fmt::format(
      "outputs differ from the reference: |diff| {:.3g} at element {} (tolerance {:.3g})", worst,
      worst_at, tolerance);
}

PlanTolerance plan_output_tolerance(const Graph& model) {
  for (const Value& value : model.values()) {
    if (!value.is_constant() &&
        (value.type.dtype == DType::kInt8 || value.type.dtype == DType::kUInt8)) {
      return PlanTolerance{2e-2, 0.15};
    }
  }
  return PlanTolerance{};
}

namespace {

// The layout each of `edges` of `partition` is timed in on `backend`
// (preferred_edges), with or without its model edges left plain.
std::vector<EdgeLayout> timed_layouts(const Graph& partition, const Backend& backend,
                                      const std::vector<ValueId>& edges, bool model_edges_plain) {
  const bool follows = follows_layouts(backend, partition);
  // A follower takes its neighbours' layout: the search's, where the value
  // fits it (backends/search_layout.h), else channels-last.
  const EdgeLayout followed = backend.search_layout().value_or(EdgeLayout::kChannelsLast);
  std::vector<EdgeLayout> result;
  for (ValueId edge : edges) {
    const TensorType& type = partition.type(edge);
    if (edge_layout_free(type) ||
        (model_edges_plain && partition.model_edges.contains(partition.value(edge).name))) {
      result.push_back(EdgeLayout::kPlain);
    } else if (follows) {
      result.push_back(edge_layout_fits(followed, type) ? followed : EdgeLayout::kChannelsLast);
    } else {
      result.push_back(timed_edge_layout(backend, type));
    }
  }
  return result;
}

}  // namespace

CompileOptions preferred_edges(const Graph& partition, const Backend& backend, int threads) {
  CompileOptions options{threads};
  options.input_layouts = timed_layouts(partition, backend, partition.inputs(), true);
  options.output_layouts = timed_layouts(partition, backend, partition.outputs(), true);
  auto laid_out = [](const std::vector<EdgeLayout>& layouts) {
    return std::any_of(layouts.begin(), layouts.end(),
                       [](EdgeLayout layout) { return layout != EdgeLayout::kPlain; });
  };
  if (!laid_out(options.input_layouts) && !laid_out(options.output_layouts)) {
    return CompileOptions{threads};
  }
  return options;
}

std::string model_edges_context(const Graph& partition, const Backend& backend) {
  if (partition.model_edges.empty()) return "";
  // The edges that would be laid out were they not model edges.
  std::set<ValueId> laid_out;
  for (const std::vector<ValueId>* edges : {&partition.inputs(), &partition.outputs()}) {
    const std::vector<EdgeLayout> unforced = timed_layouts(partition, backend, *edges, false);
    for (std::size_t i = 0; i < edges->size(); ++i) {
      if (unforced[i] != EdgeLayout::kPlain) laid_out.insert((*edges)[i]);
    }
  }
  const std::vector<std::string> plain =
      model_edge_positions(partition, [&](ValueId edge) { return laid_out.contains(edge); });
  return plain.empty() ? "" : fmt::format("plain={}", fmt::join(plain, ","));
}

InProcessMeasurer::InProcessMeasurer(const Backend& reference, MeasureOptions options)
    : reference_(reference), options_(std::move(options)), evictor_(options_.threads) {}

Cost InProcessMeasurer::measure(const Graph& model, const std::vector<NodeId>& nodes,
                                const Backend& backend) {
  return measure_partition(
      extract_subgraph(model, nodes), backend,
      options_.plan_caches ? eviction_bytes(model, nodes, options_.threads) : 0);
}

Cost InProcessMeasurer::screen(const Graph& model, const std::vector<NodeId>& nodes,
                               const Backend& backend) {
  return measure_partition(
      extract_subgraph(model, nodes), backend,
      options_.plan_caches ? eviction_bytes(model, nodes, options_.threads) : 0, Timing::kScreen);
}

Cost InProcessMeasurer::measure_partition(const Graph& partition, const Backend& backend,
                                          std::size_t evict_bytes, Timing timing_kind) {
  try {
    CompileOptions compile_options{options_.threads};
    auto kernel = backend.compile(partition, compile_options);
    if (!kernel) return Cost::invalid(backend.name() + ": " + kernel.error());
    auto reference = reference_.compile(partition, compile_options);
    if (!reference) return Cost::invalid("reference: " + reference.error());

    std::map<std::string, Tensor> named = random_inputs(partition);
    std::vector<Tensor> inputs;
    for (ValueId id : partition.inputs()) inputs.push_back(named.at(partition.value(id).name));

    std::vector<Tensor> expected = run_once(**reference, partition, inputs);
    std::vector<Tensor> actual = run_once(**kernel, partition, inputs);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      auto mismatch = compare_outputs(actual[i], expected[i], options_.rtol, options_.atol);
      if (mismatch) {
        return Cost::invalid(fmt::format("{}: output '{}': {}", backend.name(),
                                         partition.value(partition.outputs()[i]).name, *mismatch));
      }
    }
    std::vector<Tensor> outputs = actual;
    // Timed as it runs in a plan beside partitions of its own backend: with
    // the edges in the layout the backend computes in (checked above with
    // plain edges, which hold the same values in another order).
    CompileOptions timed_options = preferred_edges(partition, backend, options_.threads);
    if (!timed_options.input_layouts.empty() || !timed_options.output_layouts.empty()) {
      auto preferred = backend.compile(partition, timed_options);
      if (!preferred) return Cost::invalid(backend.name() + ": " + preferred.error());
      kernel = std::move(preferred);
    }
    Kernel& timed = **kernel;
    std::function<void()> as_in_a_plan;
    if (evict_bytes > 0) {
      Twin twin;
      if (options_.twin_before && twin_runs_before(partition, evict_bytes)) {
        auto again = backend.compile(partition, timed_options);
        if (!again) return Cost::invalid(backend.name() + ": " + again.error());
        twin = Twin::of(std::move(again.value()), inputs, outputs);
      }
      as_in_a_plan = [&, twin = std::move(twin)]() mutable {
        evictor_.evict(evict_bytes);
        twin.run();
        if (options_.edges == MeasureOptions::Edges::kInputsWritten) {
          rewrite(inputs, options_.threads);
        } else {
          touch(inputs, options_.threads);
          touch(outputs, options_.threads);
        }
      };
    }
    const bool screen = timing_kind == Timing::kScreen;
    TimingResult timing =
        time_function([&] { timed.run(inputs, outputs); },
                      screen ? options_.screen_timing : options_.timing, as_in_a_plan);
    if (screen) {
      return Cost::measured(timing.min_seconds, timing.p90_seconds,
                            static_cast<std::size_t>(timing.samples));
    }
    return Cost::measured(timing.trimmed_mean_seconds, timing.p90_seconds,
                          static_cast<std::size_t>(timing.samples));
  } catch (const std::exception& e) {
    return Cost::invalid(backend.name() + ": " + e.what());
  }
}

WorkerMeasurer::WorkerMeasurer(std::vector<std::string> worker_command, MeasureOptions options)
    : worker_(std::move(worker_command)), options_(std::move(options)) {}

Cost WorkerMeasurer::measure(const Graph& model, const std::vector<NodeId>& nodes,
                             const Backend& backend) {
  MeasureRequest request;
  for (NodeId id : nodes) request.nodes.push_back(model.node(id).name);
  request.backend = measured_as(backend);
  return ask(request);
}

Cost WorkerMeasurer::screen(const Graph& model, const std::vector<NodeId>& nodes,
                            const Backend& backend) {
  MeasureRequest request;
  for (NodeId id : nodes) request.nodes.push_back(model.node(id).name);
  request.backend = measured_as(backend);
  request.screen = true;
  return ask(request);
}

Cost WorkerMeasurer::ask(const MeasureRequest& request) {
  auto reply = worker_.request(encode_measure_request(request),
                               std::chrono::duration<double>(options_.timeout_seconds));
  // The worker crashed, hung or could not start: a cause outside the
  // candidate, possibly gone next time.
  if (!reply) return Cost::transient_invalid(request.backend + ": " + reply.error());
  return decode_measure_reply(reply.value());
}

std::string encode_measure_request(const MeasureRequest& request) {
  json document{{"nodes", request.nodes}, {"backend", request.backend}};
  if (request.screen) document["screen"] = true;
  return document.dump();
}

MeasureRequest decode_measure_request(const std::string& line) {
  try {
    json document = json::parse(line);
    return MeasureRequest{document.at("nodes").get<std::vector<std::string>>(),
                          document.at("backend").get<std::string>(),
                          document.value("screen", false)};
  } catch (const json::exception& e) {
    throw Error(std::string("malformed measurement request: ") + e.what());
  }
}

std::string encode_measure_reply(const Cost& cost) {
  if (!cost.is_valid()) {
    json reply = {{"valid", false}, {"reason", cost.reason()}};
    if (cost.is_transient()) reply["transient"] = true;
    return reply.dump();
  }
  return json{{"valid", true},
              {"seconds", cost.seconds()},
              {"p90_seconds", cost.p90_seconds()},
              {"samples", cost.samples()}}
      .dump();
}

Cost decode_measure_reply(const std::string& line) {
  try {
    json document = json::parse(line);
    if (!document.at("valid").get<bool>()) {
      std::string reason = document.value("reason", std::string("invalid"));
      return document.value("transient", false) ? Cost::transient_invalid(std::move(reason))
                                                : Cost::invalid(std::move(reason));
    }
    return Cost::measured(document.at("seconds").get<double>(),
                          document.at("p90_seconds").get<double>(),
                          document.at("samples").get<std::size_t>());
  } catch (const json::exception& e) {
    return Cost::invalid(std::string("malformed reply from the worker: ") + e.what());
  }
}

}  // namespace collage
