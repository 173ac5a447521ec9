#include "collage/search/backend_spec.h"

#include "collage/partition/standard_rules.h"

namespace collage {

PartitionSpecPtr make_backend_spec(const Backend& backend, const SpecOptions& options) {
  NodePredicate supported = [&backend](const Graph& graph, const Node& node) {
    return backend.supports(graph, node);
  };
  SubGraphConfig config;
  PartitionRulePtr rule;
  switch (backend.style()) {
    case BackendStyle::kLibrary: {
      config.max_exits = 1;
      config.allow_taps = false;
      std::vector<PatternEntry> entries;
      // A pattern the backend registers is one it can run as a whole; a
      // match it cannot compile after all is measured as invalid.
      for (const NamedPattern& named : backend.patterns()) {
        entries.push_back(PatternEntry{named.name, named.pattern, {}});
      }
      rule = make_library_rule(entries, supported, config);
      break;
    }
    case BackendStyle::kGraph:
      config.max_exits = options.max_exits;
      config.allow_taps = options.max_exits > 1;
      config.max_depth = options.graph_max_depth;
      rule = make_graph_rule(supported, config);
      break;
    case BackendStyle::kCompiler:
      config.max_exits = options.max_exits;
      config.allow_taps = options.max_exits > 1;
      config.max_depth = options.compiler_max_depth;
      rule = make_fusing_rule(supported, config);
      break;
  }
  SubGraphConfig merge_config = config;
  if (backend.style() != BackendStyle::kLibrary && options.unbounded_merges) {
    merge_config = SubGraphConfig{};
    merge_config.allow_taps = true;
  }
  return make_partition_spec(backend.name(), rule, config, &backend, merge_config);
}

std::vector<PartitionSpecPtr> make_backend_specs(const std::vector<const Backend*>& backends,
                                                 const SpecOptions& options) {
  std::vector<PartitionSpecPtr> specs;
  for (const Backend* backend : backends) specs.push_back(make_backend_spec(*backend, options));
  return specs;
}

}  // namespace collage
