#include "collage/plan/plan_compiler.h"

#include <fmt/format.h>

#include <unordered_map>

#include "collage/ir/error.h"
#include "collage/ir/structural_hash.h"

namespace collage {

void check_plan_matches(const Graph& model, const Plan& plan, const std::string& plan_file) {
  // Without a hash nothing says the plan fits this model; its node names
  // might still match by accident.
  if (plan.model_hash.empty()) {
    throw Error("the plan records no model hash, so it cannot be checked against the model "
                "(make it again with `collage tune`)",
                {.file = plan_file, .field = "model.hash"});
  }
  std::string hash = structural_hash_hex(model);
  if (hash != plan.model_hash) {
    throw Error(fmt::format("the plan was made for another model or other input shapes "
                            "(model hash {}, plan hash {})",
                            hash, plan.model_hash),
                {.file = plan_file});
  }
}

Executor compile_plan(const Graph& model, const Plan& plan, const BackendRegistry& registry,
                      int threads) {
  std::unordered_map<std::string, NodeId> node_by_name;
  for (std::size_t i = 0; i < model.num_nodes(); ++i) {
    node_by_name.emplace(model.node(static_cast<NodeId>(i)).name, static_cast<NodeId>(i));
  }
  std::vector<bool> placed(model.num_nodes(), false);
  std::vector<CompiledPartition> compiled;
  for (std::size_t p = 0; p < plan.partitions.size(); ++p) {
    const PlanPartition& partition = plan.partitions[p];
    std::string field = fmt::format("partitions[{}]", p);
    const Backend* backend = registry.find(partition.backend);
    if (backend == nullptr) {
      throw Error(fmt::format("backend '{}' is not in this build (it has: {})", partition.backend,
                              fmt::join(registry.names(), ", ")),
                  {.field = field});
    }
    std::vector<NodeId> nodes;
    for (const std::string& name : partition.nodes) {
      auto it = node_by_name.find(name);
      if (it == node_by_name.end()) {
        throw Error("the model has no node named " + quote_untrusted(name), {.field = field});
      }
      if (placed[static_cast<std::size_t>(it->second)]) {
        throw Error("node " + quote_untrusted(name) + " is in more than one partition", {.field = field});
      }
      placed[static_cast<std::size_t>(it->second)] = true;
      nodes.push_back(it->second);
    }
    Graph graph = extract_subgraph(model, nodes);
    auto kernel = backend->compile(graph, CompileOptions{threads});
    if (!kernel) {
      throw Error(fmt::format("{} cannot compile this partition: {}", backend->name(),
                              kernel.error()),
                  {.field = field});
    }
    compiled.push_back(CompiledPartition{std::move(nodes), std::move(graph),
                                         std::move(kernel.value()), backend->name()});
  }
  for (std::size_t i = 0; i < model.num_nodes(); ++i) {
    if (!placed[i]) {
      throw Error("the plan does not place this node", {.node = model.node(static_cast<NodeId>(i)).name});
    }
  }
  return Executor(model, std::move(compiled));
}

}  // namespace collage
