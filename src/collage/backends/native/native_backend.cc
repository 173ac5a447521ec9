#include "collage/backends/native/native_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <optional>
#include <thread>

#include "code_version.h"
#include "collage/backends/native/conv_taps.h"
#include "collage/backends/native/conv_winograd.h"
#include "collage/backends/native/elementwise_fusion.h"
#include "collage/backends/native/layout_ops.h"
#include "collage/backends/native/op_registry.h"
#include "collage/ir/control_flow.h"
#include "collage/ir/error.h"
#include "collage/runtime/layout_convert.h"

namespace collage {
namespace {

// "Foo (3), Bar (1)" for the op types of `graph` the kernels cannot run, or
// "" when they can run all of them.
std::string unsupported_summary(const Graph& graph) {
  const std::map<std::string, int> counts = unsupported_op_counts(graph, native::node_supported);
  // Most frequent first: the ops worth implementing next lead the list.
  std::vector<std::pair<std::string, int>> ordered(counts.begin(), counts.end());
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (const auto& [op_type, count] : ordered)
    parts.push_back(fmt::format("{} ({})", op_type, count));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// A value every node input refers to must be defined before its use: a graph
// input, a constant, or an output of an earlier node.
std::optional<std::string> undefined_input(const Graph& graph) {
  std::vector<bool> defined(graph.num_values(), false);
  for (ValueId input : graph.inputs()) defined[static_cast<std::size_t>(input)] = true;
  for (std::size_t v = 0; v < graph.num_values(); ++v) {
    if (graph.value(static_cast<ValueId>(v)).is_constant()) defined[v] = true;
  }
  for (const Node& node : graph.nodes()) {
    for (ValueId input : node.inputs) {
      if (input != kNoValue && !defined[static_cast<std::size_t>(input)]) {
        return fmt::format("node '{}' reads '{}' before it is defined", node.name,
                           graph.value(input).name);
      }
    }
    for (ValueId output : node.outputs) {
      if (output != kNoValue) defined[static_cast<std::size_t>(output)] = true;
    }
  }
  for (ValueId output : graph.outputs()) {
    if (!defined[static_cast<std::size_t>(output)]) {
      return fmt::format("graph output '{}' is never defined", graph.value(output).name);
    }
  }
  return std::nullopt;
}

int default_threads() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

// Memory for intermediates, shared between values whose lifetimes do not
// overlap.
class BufferPool {
 public:
  // A buffer of at least `bytes`: the smallest free one that fits, or a new one.
  std::shared_ptr<void> acquire(std::size_t bytes) {
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second >= bytes && (best == free_.end() || it->second < best->second)) best = it;
    }
    if (best != free_.end()) {
      std::shared_ptr<void> buffer = best->first;
      free_.erase(best);
      return buffer;
    }
    return allocate(bytes);
  }
  void release(std::shared_ptr<void> buffer, std::size_t bytes) {
    free_.emplace_back(std::move(buffer), bytes);
  }

 private:
  static std::shared_ptr<void> allocate(std::size_t bytes) {
    constexpr std::size_t kAlignment = 64;
    const std::size_t rounded =
        std::max(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
    void* memory = std::aligned_alloc(kAlignment, rounded);
    if (memory == nullptr) throw std::bad_alloc();
    return std::shared_ptr<void>(memory, std::free);
  }

  std::vector<std::pair<std::shared_ptr<void>, std::size_t>> free_;
};

// Runs a graph's nodes in order with the native kernels; with `fuse`,
// elementwise fusion groups run as single loops. Intermediates live in
// buffers the kernel owns, so one kernel serves one run at a time.
class NativeKernel final : public Kernel {
 public:
  // `body_kernels`: CompileOptions::body_kernels.
  // `layout`: where the values are laid out (layout_ops.h), the layout they
  // are stored in, inputs and outputs included; every node must
  // runs_in_layout.
  NativeKernel(const Graph& graph, int threads, bool fuse,
               const std::map<std::string, std::vector<std::shared_ptr<Kernel>>>& body_kernels = {},
               EdgeLayout layout = EdgeLayout::kPlain)
      : graph_(graph),
        threads_(std::max(1, threads)),
        layout_(layout),
        values_(graph.num_values()) {
    for (std::size_t v = 0; v < graph_.num_values(); ++v) {
      const Value& value = graph_.value(static_cast<ValueId>(v));
      if (!value.is_constant()) continue;
      values_[v] = *value.constant;
      if (native::laid_out(value.constant->type(), layout_)) {
        values_[v] = Tensor::allocate(value.constant->type());
        convert_edge_layout(value.constant->type(), value.constant->raw(), EdgeLayout::kPlain,
                            values_[v].raw(), layout_, threads_);
      }
    }
    plan_steps(fuse, body_kernels);
    allocate_intermediates();
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    bind(inputs, outputs);
    for (Step& step : steps_) {
      for (std::size_t i = 0; i < step.inputs.size(); ++i) {
        const ValueId id = step.inputs[i];
        step.input_tensors[i] = id == kNoValue ? Tensor() : values_[static_cast<std::size_t>(id)];
      }
      for (std::size_t i = 0; i < step.outputs.size(); ++i) {
        const ValueId id = step.outputs[i];
        step.output_tensors[i] = id == kNoValue ? Tensor() : values_[static_cast<std::size_t>(id)];
      }
      if (step.program) {
        step.program->run(step.input_tensors, step.output_tensors[0], threads_);
      } else if (!step.bodies.empty()) {
        native::run_control_flow(
            graph_, graph_.node(step.node), step.input_tensors, step.output_tensors,
            [&step](std::size_t index, std::span<const Tensor> inputs, std::span<Tensor> outputs) {
              step.bodies[index]->run(inputs, outputs);
            });
      } else if (step.in_layout) {
        native::run_in_layout(graph_, graph_.node(step.node), step.input_tensors,
                              step.output_tensors, layout_, threads_,
                              step.conv ? &*step.conv : nullptr);
      } else if (step.conv) {
        native::run_conv_prepared(graph_, graph_.node(step.node), step.input_tensors,
                                  step.output_tensors, threads_, &*step.conv);
      } else {
        step.op->run(graph_, graph_.node(step.node), step.input_tensors, step.output_tensors,
                     threads_);
      }
      // A runtime-shaped region allocates the values whose shapes it
      // learns as it runs.
      for (std::size_t i = 0; i < step.outputs.size(); ++i) {
        const ValueId id = step.outputs[i];
        if (id != kNoValue && graph_.type(id).at_run_time)
          values_[static_cast<std::size_t>(id)] = step.output_tensors[i];
      }
    }
    copy_unproduced_outputs(outputs);
    unbind();
  }

 private:
  struct Step {
    // A single node run by its op entry...
    const native::OpEntry* op = nullptr;
    NodeId node = kNoNode;
    // ...or a fusion group run as one loop.
    std::optional<native::ElementwiseProgram> program;
    // A control-flow node's bodies, compiled once (bodies(node)'s order):
    // natively, or as the plan's PlanBody says.
    std::vector<std::shared_ptr<Kernel>> bodies;
    // The node reads or writes values laid out in the kernel's layout.
    bool in_layout = false;
    // For a convolution in the layout or on Winograd: its weights prepared
    // once, and the unary ops applied to its output (convolution_before).
    std::optional<native::ConvOperands> conv;
    std::vector<ValueId> inputs;
    std::vector<ValueId> outputs;
    // Reused on every run to hand tensors to the kernel without allocating.
    std::vector<Tensor> input_tensors;
    std::vector<Tensor> output_tensors;
  };

  void plan_steps(bool fuse,
                  const std::map<std::string, std::vector<std::shared_ptr<Kernel>>>& body_kernels) {
    std::vector<const native::FusionGroup*> root_group(graph_.num_nodes(), nullptr);
    std::vector<bool> in_group(graph_.num_nodes(), false);
    std::vector<native::FusionGroup> groups;
    if (fuse) groups = native::find_fusion_groups(graph_);
    for (const native::FusionGroup& group : groups) {
      for (NodeId id : group.nodes) in_group[static_cast<std::size_t>(id)] = true;
      root_group[static_cast<std::size_t>(group.nodes.back())] = &group;
    }
    // A chain of unary ops that alone reads a convolution's or a
    // GroupNormalization's output in a layout runs in that op's store: the
    // group's step goes.
    std::vector<const native::FusionGroup*> epilogue_of(graph_.num_nodes(), nullptr);
    const std::vector<std::vector<NodeId>> consumers =
        groups.empty() ? std::vector<std::vector<NodeId>>{} : graph_.consumers();
    for (const native::FusionGroup& group : groups) {
      if (const std::optional<NodeId> producer = epilogue_producer(group, consumers)) {
        epilogue_of[static_cast<std::size_t>(*producer)] = &group;
        root_group[static_cast<std::size_t>(group.nodes.back())] = nullptr;
      }
    }
    for (std::size_t id = 0; id < graph_.num_nodes(); ++id) {
      const Node& node = graph_.node(static_cast<NodeId>(id));
      Step step;
      if (const native::FusionGroup* group = root_group[id]) {
        // Groups run at their root, after everything the group reads.
        step.program = native::ElementwiseProgram::compile(graph_, *group, layout_);
        step.inputs = group->leaves;
        step.outputs = {group->output};
      } else if (in_group[id]) {
        continue;
      } else {
        step.op = native::find_op(node);
        assert(step.op != nullptr && "NativeKernel: unsupported node survived the check");
        step.node = static_cast<NodeId>(id);
        step.in_layout = has_laid_out_value(node);
        if (is_control_flow(node)) {
          // An If's branch that could not be typed for these shapes has no
          // kernel; run_control_flow refuses to take it.
          const auto planned = body_kernels.find(node.name);
          const std::vector<const Graph*> node_bodies = collage::bodies(node);
          for (std::size_t b = 0; b < node_bodies.size(); ++b) {
            const Graph& body = *node_bodies[b];
            if (planned != body_kernels.end() && b < planned->second.size() &&
                planned->second[b] != nullptr) {
              step.bodies.push_back(planned->second[b]);
            } else if (is_typed(body)) {
              step.bodies.push_back(std::make_shared<NativeKernel>(body, threads_, fuse));
            } else {
              step.bodies.push_back(nullptr);
            }
          }
        }
        step.inputs = node.inputs;
        step.outputs = node.outputs;
        const bool winograd = native::winograd_fits(graph_, node);
        const bool by_taps = !step.in_layout && native::conv_by_taps_fits(graph_, node);
        if (node.op_type == "Conv" && (step.in_layout || winograd || by_taps)) {
          step.conv.emplace();
          const Value& weights = graph_.value(node.input(1));
          if (weights.is_constant() && by_taps) {
            step.conv->by_tap = native::weights_by_tap(*weights.constant);
          } else if (weights.is_constant() && winograd) {
            step.conv->winograd = native::winograd_weights(*weights.constant, threads_);
          } else if (weights.is_constant()) {
            step.conv->filters_by_tap = native::depthwise_filters_by_tap(*weights.constant);
          }
        }
        if (const native::FusionGroup* group = epilogue_of[id]) {
          // A GroupNormalization takes the epilogue alone.
          if (!step.conv) step.conv.emplace();
          for (NodeId member : group->nodes) {
            step.conv->epilogue.push_back(
                *native::float_elementwise_fn(graph_, graph_.node(member)));
          }
          step.outputs = {group->output};
        }
      }
      step.input_tensors.resize(step.inputs.size());
      step.output_tensors.resize(step.outputs.size());
      steps_.push_back(std::move(step));
    }
  }

  // The convolution or GroupNormalization whose output `group` alone
  // reads, when the group is a chain of unary ops and that op runs in the
  // kernel's layout (native::depthwise_conv_in_lanes, run_winograd_in_lanes
  // and group_norm_in_lanes apply them).
  std::optional<NodeId> epilogue_producer(const native::FusionGroup& group,
                                          const std::vector<std::vector<NodeId>>& consumers) const {
    if (layout_ == EdgeLayout::kPlain || group.leaves.size() != 1) return std::nullopt;
    for (NodeId member : group.nodes) {
      const std::optional<native::ElementwiseFn> fn =
          native::float_elementwise_fn(graph_, graph_.node(member));
      if (!fn || fn->unary == nullptr || fn->operands != 1 || fn->scale != 1.0f) {
        return std::nullopt;
      }
    }
    const ValueId conv_output = group.leaves[0];
    const NodeId producer = graph_.value(conv_output).producer;
    if (producer == kNoNode || graph_.is_output(conv_output) ||
        consumers[static_cast<std::size_t>(conv_output)].size() != 1) {
      return std::nullopt;
    }
    const Node& op = graph_.node(producer);
    if ((op.op_type != "Conv" && op.op_type != "GroupNormalization") || !has_laid_out_value(op) ||
        !native::runs_in_layout(graph_, op, layout_)) {
      return std::nullopt;
    }
    return producer;
  }

  bool has_laid_out_value(const Node& node) const {
    auto laid_out = [&](ValueId id) {
      return id != kNoValue && native::laid_out(graph_.type(id), layout_);
    };
    return std::any_of(node.inputs.begin(), node.inputs.end(), laid_out) ||
           std::any_of(node.outputs.begin(), node.outputs.end(), laid_out);
  }

  // Values owned by the kernel: those its steps define that are not graph outputs.
  bool is_intermediate(ValueId id) const {
    if (id == kNoValue || graph_.is_output(id)) return false;
    return !graph_.value(id).is_constant();
  }

  // Gives every intermediate a buffer once, at compile time; a buffer is
  // reused as soon as the last step reading its previous value has run.
  void allocate_intermediates() {
    std::vector<int> last_use(graph_.num_values(), -1);
    for (std::size_t s = 0; s < steps_.size(); ++s) {
      for (ValueId id : steps_[s].inputs) {
        if (id != kNoValue) last_use[static_cast<std::size_t>(id)] = static_cast<int>(s);
      }
    }
    BufferPool pool;
    std::vector<std::shared_ptr<void>> held(graph_.num_values());
    for (std::size_t s = 0; s < steps_.size(); ++s) {
      const Step& step = steps_[s];
      for (ValueId id : step.outputs) {
        if (!is_intermediate(id)) continue;
        const TensorType& type = graph_.type(id);
        std::shared_ptr<void> buffer = pool.acquire(type.byte_size());
        values_[static_cast<std::size_t>(id)] = Tensor::borrow(type, buffer, buffer.get());
        held[static_cast<std::size_t>(id)] = std::move(buffer);
      }
      // Outputs nobody reads die at once; inputs die at their last reader.
      auto retire = [&](ValueId id) {
        if (!is_intermediate(id) || last_use[static_cast<std::size_t>(id)] > static_cast<int>(s)) {
          return;
        }
        std::shared_ptr<void>& buffer = held[static_cast<std::size_t>(id)];
        if (buffer == nullptr) return;
        pool.release(std::move(buffer), graph_.type(id).byte_size());
        buffer = nullptr;
      };
      for (ValueId id : step.inputs) retire(id);
      for (ValueId id : step.outputs) retire(id);
    }
  }

  void bind(std::span<const Tensor> inputs, std::span<Tensor> outputs) {
    if (inputs.size() != graph_.inputs().size() || outputs.size() != graph_.outputs().size()) {
      throw Error(fmt::format("kernel for '{}' takes {} inputs and {} outputs, got {} and {}",
                              graph_.name, graph_.inputs().size(), graph_.outputs().size(),
                              inputs.size(), outputs.size()));
    }
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const ValueId id = graph_.outputs()[k];
      check_type(outputs[k], id, "output");
      // Outputs that no step writes (a graph input or constant passed
      // through, or a value listed twice) are copied after the steps.
      const bool first = std::find(graph_.outputs().begin(),
                                   graph_.outputs().begin() + static_cast<std::ptrdiff_t>(k),
                                   id) == graph_.outputs().begin() + static_cast<std::ptrdiff_t>(k);
      if (graph_.value(id).producer != kNoNode && first)
        values_[static_cast<std::size_t>(id)] = outputs[k];
    }
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const ValueId id = graph_.inputs()[k];
      check_type(inputs[k], id, "input");
      values_[static_cast<std::size_t>(id)] = inputs[k];
    }
  }

  void check_type(const Tensor& tensor, ValueId id, const char* role) const {
    const TensorType& expected = graph_.type(id);
    // An output known only at run time is the kernel's to allocate.
    if (expected.at_run_time) return;
    if (tensor.type() == expected && !tensor.empty()) return;
    throw Error(fmt::format("kernel {} '{}' must be {}, got {}", role, graph_.value(id).name,
                            expected.to_string(),
                            tensor.empty() ? std::string("no tensor") : tensor.type().to_string()));
  }

  void copy_unproduced_outputs(std::span<Tensor> outputs) {
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const Tensor& source = values_[static_cast<std::size_t>(graph_.outputs()[k])];
      if (graph_.type(graph_.outputs()[k]).at_run_time) {
        outputs[k] = source;
        continue;
      }
      if (source.raw() == outputs[k].raw() || source.byte_size() == 0) continue;
      std::memcpy(outputs[k].raw(), source.raw(), source.byte_size());
    }
  }

  // Drops the references to the caller's tensors between runs.
  void unbind() {
    for (ValueId id : graph_.inputs()) values_[static_cast<std::size_t>(id)] = Tensor();
    for (ValueId id : graph_.outputs()) {
      if (graph_.value(id).producer != kNoNode) values_[static_cast<std::size_t>(id)] = Tensor();
    }
    for (Step& step : steps_) {
      std::fill(step.input_tensors.begin(), step.input_tensors.end(), Tensor());
      std::fill(step.output_tensors.begin(), step.output_tensors.end(), Tensor());
    }
  }

  Graph graph_;
  int threads_;
  EdgeLayout layout_;
  std::vector<Tensor> values_;
  std::vector<Step> steps_;
};

// Whether a value of `type` given in `layout` must be converted for a
// kernel computing in `computed`.
bool converted_edge(const TensorType& type, EdgeLayout layout, EdgeLayout computed) {
  return layout != computed && (native::laid_out(type, layout) || native::laid_out(type, computed));
}

// A kernel computing in one layout whose edges come or go in others: each
// such edge is converted on the way in or out (runtime/layout_convert.h).
class EdgeConvertingKernel final : public Kernel {
 public:
  EdgeConvertingKernel(std::unique_ptr<Kernel> inner, const Graph& partition,
                       const CompileOptions& options, EdgeLayout computed)
      : inner_(std::move(inner)), computed_(computed), threads_(std::max(1, options.threads)) {
    auto edges = [&](const std::vector<ValueId>& values, const std::vector<EdgeLayout>& given,
                     std::vector<Edge>& result) {
      for (std::size_t i = 0; i < values.size(); ++i) {
        Edge edge{partition.type(values[i]), i < given.size() ? given[i] : EdgeLayout::kPlain, {}};
        if (converted_edge(edge.type, edge.layout, computed_)) {
          edge.staging = Tensor::allocate(edge.type);
        }
        result.push_back(std::move(edge));
      }
    };
    edges(partition.inputs(), options.input_layouts, inputs_);
    edges(partition.outputs(), options.output_layouts, outputs_);
    in_tensors_.resize(inputs_.size());
    out_tensors_.resize(outputs_.size());
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    for (std::size_t i = 0; i < inputs_.size() && i < inputs.size(); ++i) {
      Edge& edge = inputs_[i];
      in_tensors_[i] = inputs[i];
      if (edge.staging.empty()) continue;
      convert_edge_layout(edge.type, inputs[i].raw(), edge.layout, edge.staging.raw(), computed_,
                          threads_);
      in_tensors_[i] = edge.staging;
    }
    for (std::size_t k = 0; k < outputs_.size() && k < outputs.size(); ++k) {
      out_tensors_[k] = outputs_[k].staging.empty() ? outputs[k] : outputs_[k].staging;
    }
    inner_->run(in_tensors_, out_tensors_);
    for (std::size_t k = 0; k < outputs_.size() && k < outputs.size(); ++k) {
      const Edge& edge = outputs_[k];
      if (edge.staging.empty()) continue;
      convert_edge_layout(edge.type, edge.staging.raw(), computed_, outputs[k].raw(), edge.layout,
                          threads_);
    }
    std::fill(in_tensors_.begin(), in_tensors_.end(), Tensor());
    std::fill(out_tensors_.begin(), out_tensors_.end(), Tensor());
  }

 private:
  struct Edge {
    TensorType type;
    EdgeLayout layout;
    // Holds the value in the computed layout when it is stored otherwise.
    Tensor staging;
  };

  std::unique_ptr<Kernel> inner_;
  EdgeLayout computed_;
  int threads_;
  std::vector<Edge> inputs_;
  std::vector<Edge> outputs_;
  std::vector<Tensor> in_tensors_;
  std::vector<Tensor> out_tensors_;
};

// The layout a partition of `backend` computes in: the first layout of an
// edge that lays out its value (inputs first) in which every node runs;
// plain when none.
EdgeLayout computing_layout(const Backend& backend, const Graph& partition,
                            const CompileOptions& options) {
  auto first = [&](const std::vector<ValueId>& values,
                   const std::vector<EdgeLayout>& layouts) -> std::optional<EdgeLayout> {
    for (std::size_t i = 0; i < values.size() && i < layouts.size(); ++i) {
      if (native::laid_out(partition.type(values[i]), layouts[i]) &&
          partition_runs_in_layout(backend, partition, layouts[i])) {
        return layouts[i];
      }
    }
    return std::nullopt;
  };
  if (auto layout = first(partition.inputs(), options.input_layouts)) return *layout;
  if (auto layout = first(partition.outputs(), options.output_layouts)) return *layout;
  return EdgeLayout::kPlain;
}

// Whether a kernel computing in `computed` takes every edge of `options` as it is.
bool edges_as_computed(const Graph& partition, const CompileOptions& options, EdgeLayout computed) {
  auto fits = [&](const std::vector<ValueId>& values, const std::vector<EdgeLayout>& layouts) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      const EdgeLayout given = i < layouts.size() ? layouts[i] : EdgeLayout::kPlain;
      if (converted_edge(partition.type(values[i]), given, computed)) return false;
    }
    return true;
  };
  return fits(partition.inputs(), options.input_layouts) &&
         fits(partition.outputs(), options.output_layouts);
}

class NativeBackend final : public Backend {
 public:
  std::string name() const override { return "native"; }
  std::string version() const override { return "collage-native 0.1"; }
  std::string code_version() const override { return COLLAGE_CODE_VERSION; }
  BackendStyle style() const override { return BackendStyle::kCompiler; }

  bool supports(const Graph& graph, const Node& node) const override {
    return native::node_supported(graph, node);
  }

  // Elementwise chains, pools, global pools and channel Concats run on
  // channels-last and blocked tensors as they are (layout_ops.h); a kernel
  // converts the edges whose layout its nodes cannot compute in.
  bool runs_in_layout(const Graph& graph, const Node& node, EdgeLayout layout) const override {
    return native::runs_in_layout(graph, node, layout);
  }
  bool has_layout_followers() const override { return true; }

  std::string report_color() const override { return "#d9d9d9"; }
  std::string describe_support() const override {
    std::vector<std::string> op_types;
    for (auto table : {native::compute_ops(), native::tensor_ops(), native::control_flow_ops(),
                       native::runtime_shape_ops()}) {
      for (const native::OpEntry& entry : table) op_types.emplace_back(entry.op_type);
    }
    std::sort(op_types.begin(), op_types.end());
    return fmt::format(
        "{} ops: {}\nfuses trees of float32 elementwise and broadcast ops into one loop",
        op_types.size(), fmt::join(op_types, ", "));
  }

  Result<std::unique_ptr<Kernel>> compile(const Graph& partition,
                                          const CompileOptions& options) const override {
    const std::string unsupported = unsupported_summary(partition);
    if (!unsupported.empty()) return Failure{"native backend does not support " + unsupported};
    if (std::optional<std::string> problem = undefined_input(partition)) return Failure{*problem};
    if (std::optional<std::string> problem = edge_layout_problem(partition, options)) {
      return Failure{"native backend: " + *problem};
    }
    try {
      const EdgeLayout computed = computing_layout(*this, partition, options);
      std::unique_ptr<Kernel> kernel = std::make_unique<NativeKernel>(
          partition, options.threads, /*fuse=*/true, options.body_kernels, computed);
      if (edges_as_computed(partition, options, computed)) return kernel;
      return std::unique_ptr<Kernel>(
          std::make_unique<EdgeConvertingKernel>(std::move(kernel), partition, options, computed));
    } catch (const Error& error) {
      return Failure{error.what()};
    }
  }
};

class NativeEvaluator final : public OpEvaluator {
 public:
  bool can_evaluate(const Graph& graph, const Node& node) const override {
    return native::node_supported(graph, node);
  }

  std::vector<Tensor> evaluate(const Graph& graph, const Node& node,
                               std::span<const Tensor> inputs) const override {
    const native::OpEntry* entry = native::find_op(node);
    if (entry == nullptr) {
      throw Error("no native kernel for " + node.op_type, {.node = node.name});
    }
    std::vector<Tensor> outputs;
    for (ValueId output : node.outputs) {
      outputs.push_back(output == kNoValue ? Tensor() : Tensor::allocate(graph.type(output)));
    }
    entry->run(graph, node, inputs, outputs, threads_);
    return outputs;
  }

 private:
  int threads_ = default_threads();
};

}  // namespace

std::unique_ptr<Backend> make_native_backend() { return std::make_unique<NativeBackend>(); }

const OpEvaluator& native_evaluator() {
  static const NativeEvaluator evaluator;
  return evaluator;
}

std::unique_ptr<Kernel> compile_reference(const Graph& graph, int threads) {
  const std::string unsupported = unsupported_summary(graph);
  if (!unsupported.empty()) throw Error("unsupported operators: " + unsupported);
  if (std::optional<std::string> problem = undefined_input(graph)) throw Error(*problem);
  return std::make_unique<NativeKernel>(graph, threads, /*fuse=*/false);
}

}  // namespace collage
