#include "collage/runtime/executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <numeric>

#include "collage/ir/error.h"

namespace collage {
namespace {

constexpr std::size_t kNoSlot = std::numeric_limits<std::size_t>::max();

std::string partition_label(std::size_t index, const CompiledPartition& partition) {
  return fmt::format("partition {} ({})", index, partition.backend);
}

std::string join_names(const std::vector<std::string>& names) {
  return names.empty() ? "(none)" : fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

Executor::Executor(const Graph& model, std::vector<CompiledPartition> partitions)
    : partitions_(std::move(partitions)) {
  std::vector<std::size_t> slot_of(model.num_values(), kNoSlot);
  // Whether a value has been given a tensor: model inputs and constants from
  // the start, partition outputs once their partition is placed.
  std::vector<bool> defined(model.num_values(), false);
  std::vector<bool> written_by_kernel(model.num_values(), false);
  auto slot_for = [&](ValueId id) {
    std::size_t& slot = slot_of[static_cast<std::size_t>(id)];
    if (slot != kNoSlot) return slot;
    slot = slots_.size();
    const Value& value = model.value(id);
    slots_.push_back(value.is_constant() ? *value.constant : Tensor());
    slot_types_.push_back(value.type);
    slot_by_name_.emplace(value.name, slot);
    return slot;
  };
  for (std::size_t v = 0; v < model.num_values(); ++v) {
    if (model.values()[v].is_constant()) defined[v] = true;
  }
  for (ValueId id : model.inputs()) {
    const Value& value = model.value(id);
    input_names_.push_back(value.name);
    input_types_.push_back(value.type);
    input_slots_.push_back(slot_for(id));
    defined[static_cast<std::size_t>(id)] = true;
  }

  auto model_value = [&](const std::string& name, std::size_t index, const TensorType& type,
                         const char* role) {
    std::optional<ValueId> id = model.find_value(name);
    if (!id) {
      throw Error(fmt::format("{} {} '{}', which the model does not have",
                              partition_label(index, partitions_[index]), role, name));
    }
    if (model.type(*id) != type) {
      throw Error(fmt::format("{} {} '{}' as {}, but the model has {}",
                              partition_label(index, partitions_[index]), role, name,
                              type.to_string(), model.type(*id).to_string()));
    }
    return *id;
  };

  for (std::size_t p = 0; p < partitions_.size(); ++p) {
    const CompiledPartition& partition = partitions_[p];
    if (!partition.kernel) throw Error(partition_label(p, partition) + " has no kernel");
    std::vector<Slot> in_slots;
    for (ValueId input : partition.graph.inputs()) {
      const Value& value = partition.graph.value(input);
      ValueId id = model_value(value.name, p, value.type, "reads");
      if (!defined[static_cast<std::size_t>(id)]) {
        throw Error(fmt::format("{} reads '{}' before any partition produces it",
                                partition_label(p, partition), value.name));
      }
      in_slots.push_back(slot_for(id));
    }
    std::vector<Slot> out_slots;
    for (ValueId output : partition.graph.outputs()) {
      const Value& value = partition.graph.value(output);
      ValueId id = model_value(value.name, p, value.type, "writes");
      if (defined[static_cast<std::size_t>(id)]) {
        throw Error(fmt::format("{} writes '{}', which is already defined",
                                partition_label(p, partition), value.name));
      }
      defined[static_cast<std::size_t>(id)] = true;
      written_by_kernel[static_cast<std::size_t>(id)] = true;
      Slot slot = slot_for(id);
      slots_[slot] = Tensor::allocate(value.type);
      out_slots.push_back(slot);
    }
    input_args_.emplace_back(in_slots.size());
    output_args_.emplace_back(out_slots.size());
    partition_inputs_.push_back(std::move(in_slots));
    partition_outputs_.push_back(std::move(out_slots));
  }

  for (ValueId id : model.outputs()) {
    const Value& value = model.value(id);
    if (!defined[static_cast<std::size_t>(id)]) {
      throw Error(fmt::format("no partition produces the model output '{}'", value.name));
    }
    output_names_.push_back(value.name);
    Slot slot = slot_for(id);
    output_slots_.push_back(slot);
    if (written_by_kernel[static_cast<std::size_t>(id)] &&
        std::find(fresh_slots_.begin(), fresh_slots_.end(), slot) == fresh_slots_.end()) {
      fresh_slots_.push_back(slot);
    }
  }
  partition_seconds_.assign(partitions_.size(), 0.0);
}

void Executor::run_partitions(const std::map<std::string, Tensor>& inputs,
                              const std::map<std::string, Tensor>& given) {
  for (const auto& [name, tensor] : inputs) {
    if (std::find(input_names_.begin(), input_names_.end(), name) == input_names_.end()) {
      throw Error(fmt::format("the model has no input '{}' (its inputs: {})", name,
                              join_names(input_names_)));
    }
  }
  for (std::size_t i = 0; i < input_names_.size(); ++i) {
    const std::string& name = input_names_[i];
    auto it = inputs.find(name);
    if (it == inputs.end()) {
      throw Error(fmt::format("missing; the model needs {}", input_types_[i].to_string()),
                  {.field = "input " + quote_untrusted(name)});
    }
    if (it->second.empty()) {
      throw Error("holds no data", {.field = "input " + quote_untrusted(name)});
    }
    if (it->second.type() != input_types_[i]) {
      throw Error(fmt::format("is {}, but the model needs {}", it->second.type().to_string(),
                              input_types_[i].to_string()),
                  {.field = "input " + quote_untrusted(name)});
    }
    slots_[input_slots_[i]] = it->second;
  }
  TraceRecorder::Install install(trace_);
  const int run_index = trace_ != nullptr ? traced_runs_++ : 0;
  auto run_start = std::chrono::steady_clock::now();
  if (trace_ != nullptr) trace_->set_position(run_index, -1);
  {
    ScopedSpan span("allocate outputs", SpanKind::kAllocate);
    for (Slot slot : fresh_slots_) slots_[slot] = Tensor();
    for (std::size_t i = 0; i < output_names_.size(); ++i) {
      auto it = given.find(output_names_[i]);
      Slot slot = output_slots_[i];
      if (it == given.end() || !slots_[slot].empty() || !is_fresh(slot)) continue;
      slots_[slot] = it->second;
    }
    for (Slot slot : fresh_slots_) {
      if (slots_[slot].empty()) slots_[slot] = Tensor::allocate(slot_types_[slot]);
    }
  }

  for (std::size_t p = 0; p < partitions_.size(); ++p) {
    std::vector<Tensor>& in = input_args_[p];
    std::vector<Tensor>& out = output_args_[p];
    for (std::size_t j = 0; j < in.size(); ++j) in[j] = slots_[partition_inputs_[p][j]];
    for (std::size_t j = 0; j < out.size(); ++j) out[j] = slots_[partition_outputs_[p][j]];
    if (trace_ != nullptr) trace_->set_position(run_index, static_cast<int>(p));
    auto start = std::chrono::steady_clock::now();
    partitions_[p].kernel->run(in, out);
    // A value whose shape is known only at run time is allocated by the
    // kernel that computes it.
    for (std::size_t j = 0; j < out.size(); ++j) {
      const Slot slot = partition_outputs_[p][j];
      if (slot_types_[slot].at_run_time) slots_[slot] = out[j];
    }
    auto end = std::chrono::steady_clock::now();
    partition_seconds_[p] = std::chrono::duration<double>(end - start).count();
    if (trace_ != nullptr) record_partition(p, run_index, start, end);
  }
  if (trace_ != nullptr) {
    auto end = std::chrono::steady_clock::now();
    trace_->add(
        TraceSpan{.name = "run",
                  .kind = SpanKind::kRun,
                  .start_us = trace_->micros_since_start(run_start),
                  .duration_us = std::chrono::duration<double, std::micro>(end - run_start).count(),
                  .run = run_index});
    trace_->set_position(run_index, -1);
  }
}

double Executor::last_kernel_seconds() const {
  return std::accumulate(partition_seconds_.begin(), partition_seconds_.end(), 0.0);
}

void Executor::release_arguments() {
  // Drop the references to the caller's inputs and outputs.
  for (Slot slot : input_slots_) slots_[slot] = Tensor();
  for (Slot slot : fresh_slots_) slots_[slot] = Tensor();
  for (std::vector<Tensor>& in : input_args_) std::fill(in.begin(), in.end(), Tensor());
  for (std::vector<Tensor>& out : output_args_) std::fill(out.begin(), out.end(), Tensor());
}

std::map<std::string, Tensor> Executor::run(const std::map<std::string, Tensor>& inputs) {
  run_partitions(inputs, {});
  std::map<std::string, Tensor> outputs;
  for (std::size_t i = 0; i < output_names_.size(); ++i) {
    Slot slot = output_slots_[i];
    // A model output that is an input or a constant is copied, so the caller
    // can never write into the model's weights or its own input through it.
    outputs[output_names_[i]] = is_fresh(slot) ? slots_[slot] : slots_[slot].clone();
  }
  release_arguments();
  return outputs;
}

void Executor::run_into(const std::map<std::string, Tensor>& inputs,
                        std::map<std::string, Tensor>& outputs) {
  for (const auto& [name, tensor] : outputs) {
    auto at = std::find(output_names_.begin(), output_names_.end(), name);
    if (at == output_names_.end()) {
      throw Error(fmt::format("the model has no output '{}' (its outputs: {})", name,
                              join_names(output_names_)));
    }
    const TensorType& type =
        slot_types_[output_slots_[static_cast<std::size_t>(at - output_names_.begin())]];
    if (type.at_run_time) {
      throw Error(fmt::format("its shape ({}) is known only when the model runs; leave it out of "
                              "the outputs given, to get it in a new buffer",
                              type.to_string()),
                  {.field = "output " + quote_untrusted(name)});
    }
    if (tensor.empty() || tensor.type() != type) {
      throw Error(
          fmt::format("is {}, but the model's output is {}",
                      tensor.empty() ? "empty" : tensor.type().to_string(), type.to_string()),
          {.field = "output " + quote_untrusted(name)});
    }
  }
  run_partitions(inputs, outputs);
  for (std::size_t i = 0; i < output_names_.size(); ++i) {
    const Tensor& result = slots_[output_slots_[i]];
    auto [it, added] = outputs.try_emplace(output_names_[i]);
    if (added) {
      it->second = is_fresh(output_slots_[i]) ? result : result.clone();
    } else if (it->second.raw() != result.raw() && result.byte_size() > 0) {
      std::memcpy(it->second.raw(), result.raw(), result.byte_size());
    }
  }
  release_arguments();
}

void Executor::record_partition(std::size_t index, int run, Clock::time_point start,
                                Clock::time_point end) {
  const CompiledPartition& partition = partitions_[index];
  std::vector<std::string> ops;
  for (const Node& node : partition.graph.nodes()) ops.push_back(node.op_type);
  trace_->add(TraceSpan{
      .name = fmt::format("{} {}", partition.backend, index),
      .kind = SpanKind::kPartition,
      .start_us = trace_->micros_since_start(start),
      .duration_us = std::chrono::duration<double, std::micro>(end - start).count(),
      .run = run,
      .partition = static_cast<int>(index),
      .args = {{"backend", partition.backend}, {"ops", fmt::format("{}", fmt::join(ops, " "))}}});
}

Executor whole_model_executor(const Graph& model, const std::string& backend,
                              const PartitionCompiler& compile) {
  std::vector<CompiledPartition> partitions;
  if (model.num_nodes() > 0) {
    std::vector<NodeId> nodes(model.num_nodes());
    std::iota(nodes.begin(), nodes.end(), 0);
    Graph graph = extract_subgraph(model, nodes);
    Result<std::unique_ptr<Kernel>> kernel = compile(graph);
    if (!kernel) {
      throw Error(
          fmt::format("backend '{}' cannot compile the model: {}", backend, kernel.error()));
    }
    partitions.push_back(
        CompiledPartition{std::move(nodes), std::move(graph), std::move(*kernel), backend});
  }
  return Executor(model, std::move(partitions));
}

}  // namespace collage
