#include "collage/session/prepared_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "collage/backends/registry.h"
#include "collage/ir/error.h"
#include "collage/ir/structural_hash.h"
#include "collage/plan/plan_compiler.h"
#include "collage/session/model_loading.h"
#include "collage/session/planning.h"
#include "collage/session/resources.h"

namespace collage {
namespace {

// The thread count a saved plan was tuned at, checked like --threads.
int plan_threads(const Plan& plan, const std::string& source) {
  if (plan.threads >= 1 && plan.threads <= max_threads()) return plan.threads;
  throw Error(
      fmt::format("{} is out of range: must be between 1 and {}", plan.threads, max_threads()),
      {.file = source, .field = "threads"});
}

std::optional<std::string> measured_elsewhere(const Plan& plan, int threads,
                                              const std::string& source) {
  std::vector<std::string> differences;
  if (!plan.machine.empty() && plan.machine != machine_text(threads)) {
    differences.push_back(fmt::format("machine {} (here {})", quote_untrusted(plan.machine, 80),
                                      quote_untrusted(machine_text(threads), 80)));
  }
  for (const auto& [name, version] : plan.backend_versions) {
    const Backend* backend = BackendRegistry::global().find(name);
    if (backend == nullptr || backend->version() == version) continue;
    differences.push_back(fmt::format("{} {} (here {})", quote_untrusted(name, 40),
                                      quote_untrusted(version, 80),
                                      quote_untrusted(backend->version(), 80)));
  }
  if (differences.empty()) return std::nullopt;
  return escape_control(
      fmt::format("{}: the plan was measured with {}; its choices may not be the fastest "
                  "here (re-tune with `collage tune`)",
                  source, fmt::join(differences, ", ")));
}

// `plan`, made for other input shapes, now describes its partitions
// compiled for the shapes of `graph`: what was measured at the old shapes
// no longer applies.
void retarget_plan(Plan& plan, const Graph& graph) {
  plan.input_shapes = dynamic_input_shapes(graph);
  plan.model_hash = structural_hash_hex(graph);
  plan.estimated_ms.reset();
  plan.measured_ms.reset();
  plan.verification.clear();
  for (PlanPartition& partition : plan.partitions) {
    partition.estimated_ms.reset();
    partition.measured_ms.reset();
    partition.alternatives.clear();
  }
}

}  // namespace

PreparedModel prepare_model(const std::string& path, const std::optional<std::string>& bytes,
                            const PrepareOptions& options) {
  std::map<std::string, Shape> shapes = options.input_shapes;
  Strategy strategy = Strategy::parse(options.strategy);
  int threads = options.threads == 0 ? default_threads() : checked_threads(options.threads);
  const Plan* saved = options.plan ? &*options.plan : nullptr;
  if (saved) {
    // The plan was made for its input shapes; shapes given here override them.
    if (!options.plan_for_other_shapes) {
      for (const auto& [name, shape] : saved->input_shapes) shapes.emplace(name, shape);
    }
    strategy = Strategy::parse(saved->strategy);
    if (options.threads == 0) threads = plan_threads(*saved, options.plan_source);
    if (!options.graph_opt.empty() && options.graph_opt != saved->graph_opt) {
      throw Error(fmt::format("the plan was made at --graph-opt {}: its partitions name nodes "
                              "of that graph; leave the option out to replay it",
                              quote_untrusted(saved->graph_opt)),
                  {.field = "--graph-opt"});
    }
  }
  const GraphOptLevel graph_opt = graph_opt_level(
      saved ? saved->graph_opt : (options.graph_opt.empty() ? "all" : options.graph_opt));

  Graph graph = bytes ? load_model_bytes(*bytes, shapes, graph_opt, options.data_shapes)
                      : load_model(path, shapes, graph_opt, nullptr, options.data_shapes);
  // The shapes the data fixed, and those of open dimensions, hold from here
  // on: planning loads the model again, in worker processes. (Pinning an
  // input that was static already changes nothing.)
  if (!options.data_shapes.empty() || !graph.open_dims.empty()) {
    for (ValueId id : graph.inputs()) shapes.emplace(graph.value(id).name, graph.type(id).shape);
  }
  require_native_support(graph, path);
  check_max_memory(graph, options.max_memory);

  Plan plan;
  std::vector<std::string> warnings;
  // Data given for an input that is still open contradicts the model: the
  // run refuses it, and the warning would only precede that error.
  const bool data_disagrees =
      std::any_of(graph.open_dims.begin(), graph.open_dims.end(), [&](const OpenDim& dim) {
        return options.data_shapes.count(dim.input) != 0 ||
               (options.data_shapes.count("") != 0 && graph.inputs().size() == 1);
      });
  std::optional<std::string> open = open_dims_warning(graph);
  if (open && !data_disagrees) warnings.push_back(*open);
  if (saved) {
    plan = *saved;
    if (options.plan_for_other_shapes) {
      retarget_plan(plan, graph);
    } else {
      check_plan_matches(graph, plan, options.plan_source);
    }
    if (auto elsewhere = measured_elsewhere(plan, threads, options.plan_source))
      warnings.push_back(*elsewhere);
  } else {
    PlanningOptions planning;
    planning.model_path = path;
    planning.input_shapes = shapes;
    planning.graph_opt = graph_opt;
    planning.backends = parse_backend_list("all");
    planning.threads = threads;
    // A model given as bytes has no file for a worker process to read.
    planning.isolate = !bytes;
    plan = make_plan(graph, strategy, planning);
  }
  Executor executor = compile_plan(graph, plan, BackendRegistry::global(), threads);
  return PreparedModel{std::move(graph), std::move(plan), std::move(executor), threads,
                       std::move(warnings)};
}

}  // namespace collage
