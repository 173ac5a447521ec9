#include "collage/plan/plan_compiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include "collage/backends/compiles_ahead.h"
#include "collage/ir/control_flow.h"
#include "collage/ir/error.h"
#include "collage/ir/structural_hash.h"

namespace collage {
namespace {

// A body's plan as a kernel: its Executor, fed and read by the body's input
// and output names.
class BodyPlanKernel final : public Kernel {
 public:
  BodyPlanKernel(const Graph& body, Executor executor) : executor_(std::move(executor)) {
    for (ValueId id : body.inputs()) input_names_.push_back(body.value(id).name);
    for (ValueId id : body.outputs()) {
      output_names_.push_back(body.value(id).name);
      // A Loop's body often hands a value on unchanged.
      auto input = std::find(body.inputs().begin(), body.inputs().end(), id);
      passed_on_.push_back(
          input == body.inputs().end() ? -1 : static_cast<int>(input - body.inputs().begin()));
    }
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    if (inputs.size() != input_names_.size() || outputs.size() != output_names_.size()) {
      throw Error(fmt::format("a body plan takes {} inputs and {} outputs, got {} and {}",
                              input_names_.size(), output_names_.size(), inputs.size(),
                              outputs.size()));
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) fed_[input_names_[i]] = inputs[i];
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      if (passed_on_[k] < 0) written_.emplace(output_names_[k], outputs[k]);
    }
    executor_.run_into(fed_, written_);
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      // An input handed on, an output listed twice, or one the executor
      // put in a buffer of its own is copied to where the caller wants it.
      const Tensor& result = passed_on_[k] >= 0 ? inputs[static_cast<std::size_t>(passed_on_[k])]
                                                : written_.at(output_names_[k]);
      if (result.raw() != outputs[k].raw() && result.byte_size() == outputs[k].byte_size()) {
        std::memcpy(outputs[k].raw(), result.raw(), result.byte_size());
      }
    }
    fed_.clear();
    written_.clear();
  }

 private:
  Executor executor_;
  std::vector<std::string> input_names_;
  std::vector<std::string> output_names_;
  // Per output: the input it hands on unchanged, or -1.
  std::vector<int> passed_on_;
  // Reused between runs.
  std::map<std::string, Tensor> fed_;
  std::map<std::string, Tensor> written_;
};

// The kernels of the plan's body plans, by node name in bodies() order. A
// body plan made for other shapes than the body has here (the enclosing
// plan recompiled for other input shapes) is left out: that body runs on
// the native kernels.
std::map<std::string, std::vector<std::shared_ptr<Kernel>>> compile_bodies(
    const Graph& model, const Plan& plan, const BackendRegistry& registry, int threads) {
  std::map<std::string, std::vector<std::shared_ptr<Kernel>>> kernels;
  for (std::size_t i = 0; i < plan.bodies.size(); ++i) {
    const PlanBody& planned = plan.bodies[i];
    const std::string field = fmt::format("bodies[{}]", i);
    std::optional<NodeId> found = model.find_node(planned.node);
    if (!found) {
      throw Error("the model has no node named " + quote_untrusted(planned.node), {.field = field});
    }
    const Node& node = model.node(*found);
    const std::vector<const Graph*> node_bodies = bodies(node);
    if (planned.index >= node_bodies.size()) {
      throw Error(fmt::format("node {} has {} bodies, not {}", quote_untrusted(planned.node),
                              node_bodies.size(), planned.index + 1),
                  {.field = field});
    }
    const Graph& body = *node_bodies[planned.index];
    if (!is_typed(body) || planned.plan.model_hash != structural_hash_hex(body)) continue;
    try {
      Executor executor = compile_plan(body, planned.plan, registry, threads);
      std::vector<std::shared_ptr<Kernel>>& of_node = kernels[planned.node];
      of_node.resize(node_bodies.size());
      of_node[planned.index] = std::make_shared<BodyPlanKernel>(body, std::move(executor));
    } catch (const Error& error) {
      throw Error(fmt::format("the plan of {} of node {}: {}",
                              planned.name.empty() ? "a body" : planned.name,
                              quote_untrusted(planned.node), error.what()),
                  {.field = field});
    }
  }
  return kernels;
}

}  // namespace

void check_plan_matches(const Graph& model, const Plan& plan, const std::string& plan_file) {
  // Without a hash nothing says the plan fits this model; its node names
  // might still match by accident.
  if (plan.model_hash.empty()) {
    throw Error(
        "the plan records no model hash, so it cannot be checked against the model "
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

namespace {

// The partitions in an order that runs each after those it reads from
// (Kahn's algorithm); plan order where the partitions depend on each other
// in a cycle, which a plan that compiles never does.
// `users`: model.consumers().
std::vector<std::size_t> partitions_in_run_order(const Graph& model,
                                                 const std::vector<std::vector<NodeId>>& users,
                                                 const std::vector<std::size_t>& partition_of,
                                                 std::size_t count) {
  std::vector<std::set<std::size_t>> readers(count);
  std::vector<int> pending(count, 0);
  for (std::size_t n = 0; n < model.num_nodes(); ++n) {
    const std::size_t from = partition_of[n];
    if (from >= count) continue;
    for (ValueId out : model.node(static_cast<NodeId>(n)).outputs) {
      if (out == kNoValue) continue;
      for (NodeId user : users[static_cast<std::size_t>(out)]) {
        const std::size_t to = partition_of[static_cast<std::size_t>(user)];
        if (to < count && to != from && readers[from].insert(to).second) ++pending[to];
      }
    }
  }
  std::vector<std::size_t> order;
  for (std::size_t p = 0; p < count; ++p) {
    if (pending[p] == 0) order.push_back(p);
  }
  for (std::size_t k = 0; k < order.size(); ++k) {
    for (std::size_t to : readers[order[k]]) {
      if (--pending[to] == 0) order.push_back(to);
    }
  }
  if (order.size() == count) return order;
  order.clear();
  for (std::size_t p = 0; p < count; ++p) order.push_back(p);
  return order;
}

}  // namespace

std::vector<EdgeLayout> negotiate_edge_layouts(
    const Graph& model, const std::vector<std::vector<NodeId>>& partition_nodes,
    const std::vector<const Backend*>& backends,
    const std::vector<std::optional<EdgeLayout>>& compute_layouts) {
  const std::size_t none = partition_nodes.size();
  std::vector<std::size_t> partition_of(model.num_nodes(), none);
  for (std::size_t p = 0; p < partition_nodes.size(); ++p) {
    for (NodeId node : partition_nodes[p]) partition_of[static_cast<std::size_t>(node)] = p;
  }
  // Whether partition p runs in a layout, asked once per layout.
  std::map<std::pair<std::size_t, EdgeLayout>, bool> runs_in;
  auto runs_in_layout = [&](std::size_t p, EdgeLayout layout) {
    auto [it, inserted] = runs_in.try_emplace({p, layout}, false);
    if (inserted) {
      it->second = nodes_run_in_layout(*backends[p], model, partition_nodes[p], layout);
    }
    return it->second;
  };
  std::vector<bool> follows(partition_nodes.size());
  for (std::size_t p = 0; p < partition_nodes.size(); ++p) {
    follows[p] = runs_in_layout(p, EdgeLayout::kChannelsLast);
  }
  // Whether every reader partition takes a value in `layout`: one that
  // follows layouts when its nodes run in it, another when its backend
  // accepts it.
  auto all_take = [&](const std::vector<std::size_t>& readers, EdgeLayout layout) {
    return std::all_of(readers.begin(), readers.end(), [&](std::size_t to) {
      return follows[to] ? runs_in_layout(to, layout) : backends[to]->accepts_edge_layout(layout);
    });
  };
  const std::vector<std::vector<NodeId>> users = model.consumers();
  std::vector<EdgeLayout> result(model.num_values(), EdgeLayout::kPlain);
  for (std::size_t from : partitions_in_run_order(model, users, partition_of, none)) {
    // The layouts `from` can hand its values over in, best first. A
    // partition that follows layouts computes in the first layout its
    // inputs come in that its nodes run in (as NativeBackend::compile picks).
    std::vector<EdgeLayout> candidates;
    if (follows[from]) {
      EdgeLayout computed = EdgeLayout::kPlain;
      for (NodeId node : partition_nodes[from]) {
        for (ValueId in : model.node(node).inputs) {
          const EdgeLayout layout =
              in == kNoValue ? EdgeLayout::kPlain : result[static_cast<std::size_t>(in)];
          if (computed == EdgeLayout::kPlain && layout != EdgeLayout::kPlain &&
              runs_in_layout(from, layout)) {
            computed = layout;
          }
        }
      }
      candidates.push_back(computed);
    } else {
      candidates = backends[from]->edge_layouts();
      if (from < compute_layouts.size() && compute_layouts[from]) {
        candidates.insert(candidates.begin(), *compute_layouts[from]);
      }
    }
    for (NodeId node : partition_nodes[from]) {
      for (ValueId id : model.node(node).outputs) {
        if (id == kNoValue || model.is_output(id)) continue;
        const auto v = static_cast<std::size_t>(id);
        bool crosses = false;
        bool placed = !users[v].empty();
        std::vector<std::size_t> readers;
        for (NodeId user : users[v]) {
          const std::size_t to = partition_of[static_cast<std::size_t>(user)];
          placed &= to != none;
          crosses |= to != from;
          if (to != none && to != from) readers.push_back(to);
        }
        if (!crosses || !placed) continue;
        const TensorType& type = model.type(id);
        if (edge_layout_free(type)) continue;
        for (EdgeLayout layout : candidates) {
          if (layout == EdgeLayout::kPlain || !edge_layout_fits(layout, type)) continue;
          if (all_take(readers, layout)) {
            result[v] = layout;
            break;
          }
        }
      }
    }
  }
  return result;
}

Executor compile_plan(const Graph& model, const Plan& plan, const BackendRegistry& registry,
                      int threads) {
  std::unordered_map<std::string, NodeId> node_by_name;
  for (std::size_t i = 0; i < model.num_nodes(); ++i) {
    node_by_name.emplace(model.node(static_cast<NodeId>(i)).name, static_cast<NodeId>(i));
  }
  std::vector<bool> placed(model.num_nodes(), false);
  std::vector<std::vector<NodeId>> partition_nodes;
  std::vector<const Backend*> backends;
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
        throw Error("node " + quote_untrusted(name) + " is in more than one partition",
                    {.field = field});
      }
      placed[static_cast<std::size_t>(it->second)] = true;
      nodes.push_back(it->second);
    }
    partition_nodes.push_back(std::move(nodes));
    backends.push_back(backend);
  }
  for (std::size_t i = 0; i < model.num_nodes(); ++i) {
    if (!placed[i]) {
      throw Error("the plan does not place this node",
                  {.node = model.node(static_cast<NodeId>(i)).name});
    }
  }

  std::map<std::string, EdgeLayout> asked;
  for (const auto& [name, layout_name] : plan.compute_layouts) {
    std::optional<EdgeLayout> layout = edge_layout_from_name(layout_name);
    if (!layout) {
      throw Error(fmt::format("{} is not plain, channels-last, blocked-8 or blocked-16",
                              quote_untrusted(layout_name)),
                  {.field = "compute_layouts." + quote_untrusted(name)});
    }
    asked.emplace(name, *layout);
  }
  std::vector<std::optional<EdgeLayout>> compute_layouts;
  for (const Backend* backend : backends) {
    auto found = asked.find(backend->name());
    compute_layouts.push_back(found == asked.end() ? std::nullopt
                                                   : std::optional<EdgeLayout>(found->second));
  }
  const std::vector<EdgeLayout> value_layouts =
      negotiate_edge_layouts(model, partition_nodes, backends, compute_layouts);
  auto layouts_of = [&](const Graph& graph, const std::vector<ValueId>& edges) {
    std::vector<EdgeLayout> layouts;
    bool any = false;
    for (ValueId edge : edges) {
      std::optional<ValueId> id = model.find_value(graph.value(edge).name);
      EdgeLayout layout = id ? value_layouts[static_cast<std::size_t>(*id)] : EdgeLayout::kPlain;
      any |= layout != EdgeLayout::kPlain;
      layouts.push_back(layout);
    }
    return any ? layouts : std::vector<EdgeLayout>{};
  };
  {
    // Each backend first compiles ahead what it can, several at once.
    std::map<const Backend*, std::vector<Graph>> by_backend;
    for (std::size_t p = 0; p < partition_nodes.size(); ++p) {
      if (compiles_ahead(*backends[p]) == nullptr) continue;
      by_backend[backends[p]].push_back(extract_subgraph(model, partition_nodes[p]));
    }
    for (const auto& [backend, graphs] : by_backend) {
      compiles_ahead(*backend)->prepare(graphs, CompileOptions{threads});
    }
  }
  const std::map<std::string, std::vector<std::shared_ptr<Kernel>>> body_kernels =
      compile_bodies(model, plan, registry, threads);
  std::vector<CompiledPartition> compiled;
  for (std::size_t p = 0; p < partition_nodes.size(); ++p) {
    const Backend* backend = backends[p];
    Graph graph = extract_subgraph(model, partition_nodes[p]);
    CompileOptions options{threads};
    options.input_layouts = layouts_of(graph, graph.inputs());
    options.output_layouts = layouts_of(graph, graph.outputs());
    options.compute_layout = compute_layouts[p];
    for (NodeId node : partition_nodes[p]) {
      auto planned = body_kernels.find(model.node(node).name);
      if (planned == body_kernels.end()) continue;
      if (backend != &registry.native()) {
        throw Error(fmt::format("{} runs node {}, whose bodies have plans: only the native "
                                "backend runs bodies by their plans",
                                backend->name(), quote_untrusted(planned->first)),
                    {.field = fmt::format("partitions[{}]", p)});
      }
      options.body_kernels.emplace(planned->first, planned->second);
    }
    auto kernel = backend->compile(graph, options);
    if (!kernel) {
      throw Error(
          fmt::format("{} cannot compile this partition: {}", backend->name(), kernel.error()),
          {.field = fmt::format("partitions[{}]", p)});
    }
    compiled.push_back(CompiledPartition{std::move(partition_nodes[p]), std::move(graph),
                                         std::move(kernel.value()), backend->name()});
  }
  return Executor(model, std::move(compiled));
}

}  // namespace collage
