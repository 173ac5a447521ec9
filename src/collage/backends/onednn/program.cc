#include "collage/backends/onednn/program.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace collage::onednn {

ProgramBuilder::ProgramBuilder(const Graph& graph, dnnl::engine engine, dnnl::stream stream,
                               std::vector<EdgeLayout> input_layouts,
                               std::vector<EdgeLayout> output_layouts,
                               std::optional<EdgeLayout> compute_layout)
    : graph_(graph),
      engine_(std::move(engine)),
      stream_(std::move(stream)),
      next_synthetic_(static_cast<ValueId>(graph.num_values())),
      input_layouts_(std::move(input_layouts)),
      output_layouts_(std::move(output_layouts)),
      compute_layout_(compute_layout) {}

memory::desc ProgramBuilder::edge(ValueId value, int slot, bool output) const {
  const std::vector<EdgeLayout>& layouts = output ? output_layouts_ : input_layouts_;
  const auto index = static_cast<std::size_t>(slot);
  return edge_desc(shape(value), index < layouts.size() ? layouts[index] : EdgeLayout::kPlain,
                   data_type(value));
}

memory::data_type ProgramBuilder::data_type(ValueId value) const {
  auto it = synthetic_constants_.find(value);
  const DType dtype =
      it != synthetic_constants_.end() ? it->second.dtype() : graph_.type(value).dtype;
  std::optional<memory::data_type> type = onednn_data_type(dtype);
  if (!type) {
    throw std::runtime_error(fmt::format("value {} is {}, which oneDNN does not compute with",
                                         value, dtype_name(dtype)));
  }
  return *type;
}

const Shape& ProgramBuilder::shape(ValueId value) const {
  auto it = synthetic_constants_.find(value);
  if (it != synthetic_constants_.end()) return it->second.shape();
  return graph_.type(value).shape;
}

bool ProgramBuilder::is_constant(ValueId value) const {
  if (synthetic_constants_.count(value) != 0) return true;
  return value < static_cast<ValueId>(graph_.num_values()) && graph_.value(value).is_constant();
}

const Tensor& ProgramBuilder::constant(ValueId value) const {
  auto it = synthetic_constants_.find(value);
  if (it != synthetic_constants_.end()) return it->second;
  return *graph_.value(value).constant;
}

ValueId ProgramBuilder::add_constant(Tensor tensor) {
  ValueId id = next_synthetic_++;
  synthetic_constants_.emplace(id, std::move(tensor));
  return id;
}

ProgramBuilder::ValueState& ProgramBuilder::state(ValueId value) {
  auto it = values_.find(value);
  if (it != values_.end()) return it->second;
  const memory::desc desc = plain_desc(to_dims(shape(value)), data_type(value));
  ValueState fresh;
  if (is_constant(value)) {
    const Tensor& tensor = constant(value);
    program_.constants.push_back(tensor);
    // oneDNN only reads source memories; the const_cast never leads to a write.
    fresh.primary = memory(desc, engine_, const_cast<void*>(tensor.raw()));
  } else {
    const auto& inputs = graph_.inputs();
    auto input = std::find(inputs.begin(), inputs.end(), value);
    if (input == inputs.end()) {
      throw std::runtime_error(
          fmt::format("value '{}' is read before it is defined", graph_.value(value).name));
    }
    const int slot = static_cast<int>(input - inputs.begin());
    fresh.primary = bound_memory(edge(value, slot, false), slot, false);
  }
  return values_.emplace(value, std::move(fresh)).first->second;
}

memory::desc ProgramBuilder::desc(ValueId value) { return state(value).primary.get_desc(); }

memory ProgramBuilder::read(ValueId value, const memory::desc& want) {
  ValueState& s = state(value);
  const memory::desc current = s.primary.get_desc();
  if (current == want) return s.primary;
  for (const memory& version : s.versions) {
    if (version.get_desc() == want) return version;
  }
  if (dims_numel(current.dims()) != dims_numel(want.dims())) {
    throw std::runtime_error(fmt::format("value '{}' read with {} elements instead of {}",
                                         graph_.value(value).name, dims_numel(want.dims()),
                                         dims_numel(current.dims())));
  }
  memory result;
  if (is_plain(current) && is_plain(want) && current.data_type() == want.data_type()) {
    result = view_of(s.primary, want);
  } else if (current.dims() == want.dims()) {
    result = reorder_into_new(value, s.primary, want);
  } else {
    // A reshape of a blocked layout: go through the plain layout of the
    // current dims, whose bytes every row-major reshape shares.
    memory plain = read(value, plain_desc(current.dims(), current.data_type()));
    const memory::desc reshaped = plain_desc(want.dims(), current.data_type());
    result = is_plain(want) && want.data_type() == current.data_type()
                 ? view_of(plain, want)
                 : reorder_into_new(value, view_of(plain, reshaped), want);
  }
  state(value).versions.push_back(result);
  return result;
}

memory ProgramBuilder::reinterpret(ValueId value, const memory::desc& view) {
  const memory::desc current = desc(value);
  memory plain = read(value, plain_desc(current.dims(), current.data_type()));
  return view_of(plain, view);
}

memory ProgramBuilder::zero_point_memory(std::int32_t value) {
  return read_plain(add_constant(Tensor::from_vector<std::int32_t>({value}, {1})), {1});
}

memory ProgramBuilder::read_plain(ValueId value, const memory::dims& dims) {
  return read(value, plain_desc(dims, data_type(value)));
}

memory ProgramBuilder::read_view(ValueId value, const memory::desc& view,
                                 const memory::desc& want) {
  if (view == plain_desc(view.dims(), view.data_type())) return read(value, want);
  memory seen = reinterpret(value, view);
  if (view == want) return seen;
  return reorder_into_new(value, seen, want);
}

memory ProgramBuilder::view_of(const memory& base, const memory::desc& view) {
  if (const Binding* binding = binding_of(base)) {
    return bound_memory(view, binding->slot, binding->output);
  }
  memory result(view, engine_, base.get_data_handle());
  program_.memories.push_back(base);
  program_.memories.push_back(result);
  return result;
}

memory ProgramBuilder::part_of(const memory& base, const memory::desc& part,
                               std::size_t offset_bytes) {
  if (const Binding* binding = binding_of(base)) {
    const int slot = binding->slot;
    const bool output = binding->output;
    memory result = bound_memory(part, slot, output);
    program_.bindings.back().offset_bytes = offset_bytes;
    return result;
  }
  memory result(part, engine_, static_cast<char*>(base.get_data_handle()) + offset_bytes);
  program_.memories.push_back(base);
  program_.memories.push_back(result);
  return result;
}

memory ProgramBuilder::reorder_into_new(ValueId value, const memory& src,
                                        const memory::desc& want) {
  memory dst(want, engine_);
  program_.memories.push_back(dst);
  if (is_constant(value)) {
    // Weights and other constants are converted once, here.
    memory from = src;
    dnnl::reorder(from, dst).execute(stream_, from, dst);
    stream_.wait();
    return dst;
  }
  add_reorder(src, dst);
  return dst;
}

void ProgramBuilder::add_reorder(const memory& src, const memory& dst) {
  program_.steps.push_back(
      Step{dnnl::reorder(src, dst), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}}, true});
}

memory ProgramBuilder::output_memory(ValueId value, const memory::desc& desc) {
  const auto& outputs = graph_.outputs();
  auto output = std::find(outputs.begin(), outputs.end(), value);
  if (output != outputs.end()) {
    const int slot = static_cast<int>(output - outputs.begin());
    const memory::desc want = edge(value, slot, true);
    if (desc == want ||
        (is_plain(desc) && is_plain(want) && desc.data_type() == want.data_type())) {
      return bound_memory(desc, slot, true);
    }
  }
  memory result(desc, engine_);
  program_.memories.push_back(result);
  return result;
}

std::optional<memory> ProgramBuilder::buffer_to_overwrite(
    ValueId operand, ValueId output, const memory::desc& desc,
    const std::vector<ValueId>& added_by_step) {
  if (graph_.is_output(output) || graph_.is_output(operand)) return std::nullopt;
  const auto found = values_.find(operand);
  if (found == values_.end()) return std::nullopt;
  const memory& mem = found->second.primary;
  if (mem.get_desc() != desc || binding_of(mem) != nullptr) return std::nullopt;
  void* data = mem.get_data_handle();
  if (data == nullptr) return std::nullopt;
  for (const auto& [value, held] : values_) {
    if (value == operand || overwritten_.contains(value)) continue;
    if (held.primary.get_data_handle() == data) return std::nullopt;
    for (const memory& version : held.versions) {
      if (version.get_data_handle() == data) return std::nullopt;
    }
  }
  // The readers still to run: only the Add whose sum this is.
  if (consumers_.empty()) consumers_ = graph_.consumers();
  int pending = 0;
  for (NodeId reader : consumers_[static_cast<std::size_t>(operand)]) {
    if (emitted_.contains(reader)) continue;
    const Node& node = graph_.node(reader);
    const bool adds = node.op_type == "Add" && node.outputs.size() == 1 &&
                      std::find(added_by_step.begin(), added_by_step.end(), node.outputs[0]) !=
                          added_by_step.end();
    if (!adds || ++pending > 1) return std::nullopt;
  }
  // Its buffer now holds `output`: a later step may hand it over again.
  overwritten_.insert(operand);
  return mem;
}

void ProgramBuilder::note_emitted(const std::vector<NodeId>& nodes) {
  emitted_.insert(nodes.begin(), nodes.end());
}

void ProgramBuilder::define(ValueId value, const memory& mem) {
  values_[value] = ValueState{mem, {}};
  const Binding* binding = binding_of(mem);
  const int written_slot = binding != nullptr && binding->output ? binding->slot : -1;
  const auto& outputs = graph_.outputs();
  for (std::size_t slot = 0; slot < outputs.size(); ++slot) {
    if (outputs[slot] != value || written_slot == static_cast<int>(slot)) continue;
    const memory::desc want = edge(value, static_cast<int>(slot), true);
    memory dst = bound_memory(want, static_cast<int>(slot), true);
    memory src = mem.get_desc().dims() == want.dims() ? mem : read_plain(value, want.dims());
    add_reorder(src, dst);
  }
}

void ProgramBuilder::copy_into(ValueId value, const memory& dst) {
  const memory::dims dims = dst.get_desc().dims();
  memory src = desc(value).dims() == dims ? state(value).primary : read_plain(value, dims);
  // The op's own copy (a part of a concat, an accumulator), traced as its work.
  add(dnnl::reorder(src, dst), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
}

void ProgramBuilder::add(dnnl::primitive primitive, std::unordered_map<int, memory> args) {
  program_.steps.push_back(Step{std::move(primitive), std::move(args)});
}

const Binding* ProgramBuilder::binding_of(const memory& mem) const {
  for (const Binding& binding : program_.bindings) {
    if (binding.mem.get() == mem.get()) return &binding;
  }
  return nullptr;
}

memory ProgramBuilder::bound_memory(const memory::desc& desc, int slot, bool output) {
  memory result(desc, engine_, DNNL_MEMORY_NONE);
  program_.bindings.push_back(Binding{result, slot, output});
  return result;
}

bool ProgramBuilder::is_defined(ValueId value) const {
  if (values_.count(value) != 0 || is_constant(value)) return true;
  const auto& inputs = graph_.inputs();
  return std::find(inputs.begin(), inputs.end(), value) != inputs.end();
}

void ProgramBuilder::label_steps(std::size_t first, const std::string& label,
                                 const std::string& node) {
  for (std::size_t i = first; i < program_.steps.size(); ++i) {
    if (program_.steps[i].is_reorder) continue;
    program_.steps[i].label = label;
    program_.steps[i].node = node;
  }
}

Program ProgramBuilder::finish() { return std::move(program_); }

}  // namespace collage::onednn
