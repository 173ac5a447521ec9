// Program: a compiled partition as a list of oneDNN steps over memories.
//
// ProgramBuilder is where values meet layouts. Each value of the partition
// lives in one memory in whatever layout its producer chose (a convolution's
// blocked nChw8c, a plain row-major input); a consumer asks for the layout it
// needs and the builder inserts a reorder only when the layout really
// changes, caching the result so a value is converted at most once per
// layout. Constants are converted right away, at compile time; everything
// else becomes a step that runs on every call. Memories over the kernel's
// inputs and outputs have no buffer of their own: they are bound to the
// caller's tensors on each run, in the layout the caller stores them in
// (CompileOptions' edge layouts), so an edge in the layout its producer or
// consumer computes in costs no copy.
#pragma once

#include <dnnl.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "collage/backends/onednn/layout.h"
#include "collage/ir/graph.h"

namespace collage::onednn {

// One primitive execution with its arguments.
struct Step {
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args;
  // A reorder between layouts (traced as layout work, not compute).
  bool is_reorder = false;
  // The op types the primitive computes ("Conv+Relu") and the name of the
  // node it was lowered from (the chain's first), for the trace.
  std::string label;
  std::string node;
};

// A memory that points into kernel input or output `slot`; its data handle is
// set before each run.
struct Binding {
  memory mem;
  int slot = 0;
  bool output = false;
  // Where the memory starts in the tensor (a part of it, see part_of).
  std::size_t offset_bytes = 0;
};

struct Program {
  std::vector<Step> steps;
  std::vector<Binding> bindings;
  // Buffers and constants the steps refer to, kept alive with the program.
  std::vector<memory> memories;
  std::vector<Tensor> constants;
};

class ProgramBuilder {
 public:
  // `input_layouts`, `output_layouts` and `compute_layout` as in
  // CompileOptions (empty: all plain; unset: oneDNN's choice).
  ProgramBuilder(const Graph& graph, dnnl::engine engine, dnnl::stream stream,
                 std::vector<EdgeLayout> input_layouts = {},
                 std::vector<EdgeLayout> output_layouts = {},
                 std::optional<EdgeLayout> compute_layout = std::nullopt);

  const Graph& graph() const { return graph_; }
  const dnnl::engine& engine() const { return engine_; }
  // The layout a convolution whose input arrives plain computes in, where
  // oneDNN has a generated kernel for it; unset: oneDNN's choice.
  std::optional<EdgeLayout> compute_layout() const { return compute_layout_; }

  // The logical (ONNX) shape of a value.
  const Shape& shape(ValueId value) const;
  bool is_constant(ValueId value) const;
  // The data of a constant value.
  const Tensor& constant(ValueId value) const;
  // A constant computed at compile time (folded weights, scaled bias),
  // usable like any other value.
  ValueId add_constant(Tensor tensor);

  // The layout `value` currently lives in; its dims may be a reshape of the
  // value's shape (a matmul lowers [K] to [1, K]).
  memory::desc desc(ValueId value);

  // Names the compute steps added since the first `first` steps (see Step).
  void label_steps(std::size_t first, const std::string& label, const std::string& node);
  std::size_t step_count() const { return program_.steps.size(); }

  // `value` in layout `want`. When `want` has other dims than the current
  // layout they must have the same element count: the value is read as a
  // row-major reshape. Reorders are added (or, for constants, run now) only
  // when needed.
  memory read(ValueId value, const memory::desc& want);
  // `value` in the dense row-major layout of `dims`, in its own data type.
  memory read_plain(ValueId value, const memory::dims& dims);
  // The row-major buffer of `value` seen through another descriptor over the
  // same bytes (a transposed view via strides). No data moves.
  memory reinterpret(ValueId value, const memory::desc& view);
  // `value` seen through `view` (as in reinterpret), converted to layout
  // `want`: how weights stored transposed or grouped reach a primitive.
  memory read_view(ValueId value, const memory::desc& view, const memory::desc& want);

  // A memory for a primitive to write `value` into in layout `desc`: the
  // caller's output tensor itself when `value` is a kernel output and `desc`
  // is the layout of that edge, else a new buffer.
  memory output_memory(ValueId value, const memory::desc& desc);
  // The buffer of `operand` for a step that writes `output` in layout
  // `desc` to overwrite: the accumulator of a sum post-op, written in place
  // instead of copied. Only where `operand` lives in that layout in a
  // buffer of its own (not the kernel's edge, not shared with a view of
  // another value), neither value is a kernel output, and every node that
  // reads `operand` has run already (note_emitted) but one: the Add of the sum, among the
  // nodes whose values the step's post-ops define (`added_by_step`). A
  // primitive that reads `operand` otherwise (as its source, or a binary
  // post-op's) gets nullopt.
  std::optional<memory> buffer_to_overwrite(ValueId operand, ValueId output,
                                            const memory::desc& desc,
                                            const std::vector<ValueId>& added_by_step);
  // Records that the steps computing `nodes` have been added (lowering.cc,
  // after each fused op): buffer_to_overwrite counts them as run.
  void note_emitted(const std::vector<NodeId>& nodes);
  // Records that `mem` now holds `value` (after the step writing it was
  // added); copies it to the kernel output when it is one and was not
  // written there directly.
  void define(ValueId value, const memory& mem);
  // Adds a step copying `value` into `dst` (same element count), e.g. the
  // accumulator of a sum post-op or a part of a concat: the op's own work,
  // not a layout conversion, in a trace.
  void copy_into(ValueId value, const memory& dst);
  void add(dnnl::primitive primitive, std::unordered_map<int, memory> args);
  // A memory over the same buffer as `base` with descriptor `view` (a part
  // of it, from submemory_desc, or another shape of its bytes).
  memory view_of(const memory& base, const memory::desc& view);
  // A memory with descriptor `part` over `base`'s buffer from `offset_bytes`
  // on: a part that is dense on its own (the channels of one image in a
  // plain or blocked layout), for a primitive that takes only dense
  // destinations.
  memory part_of(const memory& base, const memory::desc& part, std::size_t offset_bytes);

  // A one-element s32 memory holding `value`: a zero point the int8
  // primitives take at run time (DNNL_ARG_ATTR_ZERO_POINTS | arg).
  memory zero_point_memory(std::int32_t value);

  // Whether `value` is an input, a constant or has been defined.
  bool is_defined(ValueId value) const;

  Program finish();

 private:
  struct ValueState {
    memory primary;
    std::vector<memory> versions;
  };

  ValueState& state(ValueId value);
  // oneDNN's data type for `value`'s elements.
  memory::data_type data_type(ValueId value) const;
  memory reorder_into_new(ValueId value, const memory& src, const memory::desc& want);
  void add_reorder(const memory& src, const memory& dst);
  const Binding* binding_of(const memory& mem) const;
  memory bound_memory(const memory::desc& desc, int slot, bool output);
  // The descriptor of kernel input or output `slot` in the caller's layout.
  memory::desc edge(ValueId value, int slot, bool output) const;

  const Graph& graph_;
  dnnl::engine engine_;
  dnnl::stream stream_;
  std::unordered_map<ValueId, ValueState> values_;
  std::unordered_map<ValueId, Tensor> synthetic_constants_;
  // The nodes note_emitted named.
  std::unordered_set<NodeId> emitted_;
  // Values whose buffer buffer_to_overwrite handed to another value.
  std::unordered_set<ValueId> overwritten_;
  // graph_.consumers(), computed on first use.
  std::vector<std::vector<NodeId>> consumers_;
  ValueId next_synthetic_;
  std::vector<EdgeLayout> input_layouts_;
  std::vector<EdgeLayout> output_layouts_;
  std::optional<EdgeLayout> compute_layout_;
  Program program_;
};

}  // namespace collage::onednn
