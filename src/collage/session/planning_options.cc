#include "collage/session/planning_options.h"

#include <algorithm>

#include "collage/backends/registry.h"
#include "collage/cost/machine_fingerprint.h"
#include "collage/ir/error.h"

namespace collage {

void check_search_settings(const SearchSettings& settings) {
  if (settings.refine_rounds < 0 || settings.refine_rounds > 20) {
    throw Error("must be between 0 and 20", {.field = "--refine-rounds"});
  }
  if (settings.max_depth < 1 || settings.max_depth > 64) {
    throw Error("must be between 1 and 64", {.field = "--max-depth"});
  }
  if (settings.max_exits < 1 || settings.max_exits > 16) {
    throw Error("must be between 1 and 16", {.field = "--max-exits"});
  }
  if (!(settings.budget_seconds >= 0) || settings.budget_seconds > 86400) {
    throw Error("must be between 0 and 86400 seconds", {.field = "--budget"});
  }
  if (settings.layout != "auto" && settings.layout != "own" && settings.layout != "each" &&
      (!edge_layout_from_name(settings.layout) || settings.layout == "plain")) {
    throw Error("must be each, auto, own, channels-last, blocked-8 or blocked-16",
                {.field = "--search-layout"});
  }
}

std::vector<const Backend*> resolve_backends(const std::vector<std::string>& names) {
  const BackendRegistry& registry = BackendRegistry::global();
  std::vector<const Backend*> backends = {&registry.native()};
  for (const std::string& name : names) {
    const Backend* backend = &registry.get(name);
    if (std::find(backends.begin(), backends.end(), backend) == backends.end()) {
      backends.push_back(backend);
    }
  }
  return backends;
}

std::vector<std::string> parse_backend_list(const std::string& text) {
  if (text == "all") return BackendRegistry::global().names();
  std::vector<std::string> names = split_backend_names(text);
  if (names.empty()) throw Error("no backend named", {.field = "--backends"});
  return names;
}

std::string machine_text(int threads) { return MachineFingerprint::current(threads).to_string(); }

SpecOptions spec_options(const SearchSettings& settings) {
  SpecOptions specs;
  specs.graph_max_depth = static_cast<std::size_t>(settings.max_depth);
  specs.compiler_max_depth = static_cast<std::size_t>(settings.max_depth);
  specs.max_exits = static_cast<std::size_t>(settings.max_exits);
  return specs;
}

std::vector<PartitionSpecPtr> planning_specs(const std::vector<const Backend*>& backends,
                                             const PlanningOptions& options) {
  std::vector<PartitionSpecPtr> specs;
  for (const PartitionSpecPtr& spec : make_backend_specs(backends, spec_options(options.search))) {
    specs.push_back(options.placement.constrain(spec));
  }
  return specs;
}

void check_placement(const Graph& graph, const PlanningOptions& options) {
  if (options.placement.empty()) return;
  options.placement.check(graph, resolve_backends(options.backends),
                          BackendRegistry::global().names());
}

PlanContext plan_context(const Strategy& strategy, const PlanningOptions& options) {
  return PlanContext{
      strategy.to_string(),          options.model_path, options.input_shapes,
      machine_text(options.threads), options.threads,    std::string(to_string(options.graph_opt)),
      options.placement.describe()};
}

}  // namespace collage
