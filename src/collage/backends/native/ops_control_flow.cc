// If, Loop and Scan (ir/control_flow.h). run_control_flow holds their
// semantics, with the bodies run by a callback: a compiled native kernel
// runs bodies it compiled once, the op entries (constant folding) run them
// node by node, as the reference executor runs a graph. Every value has a
// static type, settled at import (onnx/type_inference.h): a Loop's scan
// outputs are as long as its trip count, and a loop that stops early is
// reported, not shortened; an If's branch that could not be typed for the
// model's shapes is reported if taken.
#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "collage/backends/native/op_registry.h"
#include "collage/ir/control_flow.h"
#include "collage/ir/error.h"
#include "collage/ir/passes/partial_type.h"

namespace collage::native {
namespace {

bool body_supported(const Graph& body) { return is_typed(body) && graph_supported(body); }

// Runs `body` on `inputs` (one per body input, of its types).
std::vector<Tensor> run_body(const Graph& body, std::span<const Tensor> inputs, int threads) {
  return run_node_by_node(body, inputs, [&](const Node& node, std::span<const Tensor> in) {
    std::vector<Tensor> outputs;
    for (ValueId id : node.outputs) outputs.push_back(Tensor::allocate(body.type(id)));
    find_op(node)->run(body, node, in, outputs, threads);
    return outputs;
  });
}

void copy_into(const Tensor& from, Tensor& to) {
  if (from.byte_size() != to.byte_size()) {
    throw Error(fmt::format("a body gave {} where {} was planned", from.type().to_string(),
                            to.type().to_string()));
  }
  if (from.byte_size() > 0) std::memcpy(to.raw(), from.raw(), from.byte_size());
}

// Bytes of one element, and the outer count and the inner bytes of `shape`
// around `axis`.
struct AxisSplit {
  std::int64_t outer = 1;
  std::int64_t length = 1;
  std::size_t inner_bytes = 0;
};

AxisSplit split_at(const TensorType& type, std::int64_t axis) {
  AxisSplit split;
  std::int64_t inner = 1;
  for (std::int64_t d = 0; d < type.rank(); ++d) {
    const std::int64_t dim = type.shape[static_cast<std::size_t>(d)];
    if (d < axis) split.outer *= dim;
    if (d == axis) split.length = dim;
    if (d > axis) inner *= dim;
  }
  split.inner_bytes = static_cast<std::size_t>(inner) * dtype_size(type.dtype);
  return split;
}

// Copies slice `index` of `whole` along `axis` into `part` (whole's type
// without that axis), or back when `to_whole`.
void move_slice(Tensor& whole, std::int64_t axis, std::int64_t index, Tensor& part, bool to_whole) {
  const AxisSplit split = split_at(whole.type(), axis);
  auto* whole_bytes = static_cast<std::byte*>(whole.raw());
  auto* part_bytes = static_cast<std::byte*>(part.raw());
  for (std::int64_t o = 0; o < split.outer; ++o) {
    std::byte* in_whole =
        whole_bytes + static_cast<std::size_t>(o * split.length + index) * split.inner_bytes;
    std::byte* in_part = part_bytes + static_cast<std::size_t>(o) * split.inner_bytes;
    if (to_whole) {
      std::memcpy(in_whole, in_part, split.inner_bytes);
    } else {
      std::memcpy(in_part, in_whole, split.inner_bytes);
    }
  }
}

std::int64_t normalized_axis(std::int64_t axis, std::int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

// `type` without its axis `axis` (a slice of it along that axis).
TensorType without_axis(TensorType type, std::int64_t axis) {
  type.shape.erase(type.shape.begin() + axis);
  return type;
}

// Whether the body's captured inputs have the types of the node's.
bool captured_types_match(const Graph& graph, const Node& node, const Graph& body) {
  const std::size_t formal = formal_inputs(node);
  const std::size_t body_formal = body.inputs().size() - static_cast<std::size_t>(body.captured);
  for (std::size_t i = formal; i < node.inputs.size(); ++i) {
    if (!(graph.type(node.inputs[i]) == body.type(body.inputs()[body_formal + i - formal]))) {
      return false;
    }
  }
  return true;
}

// Whether `id` is one element of a bool or integer type (a condition or a
// trip count).
bool is_flag(const Graph& graph, ValueId id) {
  if (id == kNoValue) return false;
  const TensorType& type = graph.type(id);
  return is_static(type) && type.numel() == 1 && type.dtype != DType::kFloat32 &&
         type.dtype != DType::kFloat64 && type.dtype != DType::kFloat16;
}

// --- If ---

const Graph* branch(const Node& node, const char* name) {
  if (!node.attributes.has(name)) return nullptr;
  const Subgraph& graph = node.attributes.get_graph(name);
  return graph.get();
}

bool check_if(const Graph& graph, const Node& node) {
  const Graph* then_branch = branch(node, "then_branch");
  const Graph* else_branch = branch(node, "else_branch");
  if (then_branch == nullptr || else_branch == nullptr || formal_inputs(node) != 1 ||
      !is_flag(graph, node.input(0))) {
    return false;
  }
  int runnable = 0;
  for (const Graph* body : {then_branch, else_branch}) {
    if (body->outputs().size() != node.outputs.size() ||
        body->inputs().size() != static_cast<std::size_t>(body->captured)) {
      return false;
    }
    // A branch that could not be typed for these shapes fails if taken.
    if (!is_typed(*body)) continue;
    if (!graph_supported(*body)) return false;
    ++runnable;
    for (std::size_t i = 0; i < node.outputs.size(); ++i) {
      if (!(body->type(body->outputs()[i]) == graph.type(node.outputs[i]))) return false;
    }
    if (!captured_types_match(graph, node, *body)) return false;
  }
  return runnable > 0;
}

void if_semantics(const Node& node, std::span<const Tensor> inputs, std::span<Tensor> outputs,
                  const BodyRun& run_body) {
  const bool taken = inputs[0].int_at(0) != 0;
  const Graph& body = *bodies(node)[taken ? 0 : 1];
  if (!is_typed(body)) {
    throw Error(fmt::format("its {} branch was taken, which cannot run for the input shapes the "
                            "model was prepared for (its shapes are unknown there); give the "
                            "shapes that branch expects with --input-shape",
                            taken ? "then" : "else"),
                {.node = node.name});
  }
  // The branches' outputs have the If's types: they are written in place.
  run_body(taken ? 0 : 1, inputs.subspan(1), outputs);
}

// --- Loop ---

bool check_loop(const Graph& graph, const Node& node) {
  const Graph* body = branch(node, "body");
  if (body == nullptr) return false;
  const std::size_t formal = formal_inputs(node);
  if (formal < 2) return false;
  const std::size_t carried = formal - 2;
  if (body->inputs().size() != formal + static_cast<std::size_t>(body->captured) ||
      body->outputs().size() < 1 + carried || node.outputs.size() != body->outputs().size() - 1 ||
      !body_supported(*body)) {
    return false;
  }
  for (std::size_t i = 0; i < 2; ++i) {
    if (node.input(i) != kNoValue && !is_flag(graph, node.input(i))) return false;
  }
  if (!captured_types_match(graph, node, *body)) return false;
  const TensorType& iteration = body->type(body->inputs()[0]);
  const TensorType& condition = body->type(body->inputs()[1]);
  if (iteration.dtype != DType::kInt64 || iteration.numel() != 1 ||
      condition.dtype != DType::kBool || condition.numel() != 1 ||
      !is_flag(*body, body->outputs()[0])) {
    return false;
  }
  for (std::size_t k = 1 + carried; k < body->outputs().size(); ++k) {
    const TensorType& whole = graph.type(node.outputs[k - 1]);
    if (whole.shape.empty() || !(without_axis(whole, 0) == body->type(body->outputs()[k]))) {
      return false;
    }
  }
  for (std::size_t i = 0; i < carried; ++i) {
    const TensorType& state = body->type(body->outputs()[1 + i]);
    if (!(state == graph.type(node.outputs[i])) || !(state == body->type(body->inputs()[2 + i])) ||
        !(state == graph.type(node.inputs[2 + i]))) {
      return false;
    }
  }
  return true;
}

// Tensors of the given types, newly allocated.
std::vector<Tensor> allocate_all(const Graph& body, std::span<const ValueId> ids) {
  std::vector<Tensor> tensors;
  for (ValueId id : ids) tensors.push_back(Tensor::allocate(body.type(id)));
  return tensors;
}

void loop_semantics(const Node& node, std::span<const Tensor> inputs, std::span<Tensor> outputs,
                    const BodyRun& run_body) {
  const Graph& body = *branch(node, "body");
  const std::size_t formal = formal_inputs(node);
  const std::size_t carried = formal - 2;
  const std::size_t scanned = outputs.size() - carried;
  const bool bounded = !inputs[0].empty();
  const std::int64_t trip_count = bounded ? inputs[0].int_at(0) : 0;
  bool condition = inputs[1].empty() || inputs[1].int_at(0) != 0;

  // The body's inputs: iteration, condition, carried values, captured
  // values; its outputs: condition, carried values, scan slices. Carried
  // values alternate between two sets of buffers, allocated once.
  std::vector<Tensor> body_inputs(body.inputs().size());
  for (std::size_t i = 0; i < carried; ++i) body_inputs[2 + i] = inputs[2 + i];
  for (std::size_t i = formal; i < inputs.size(); ++i) body_inputs[i] = inputs[i];
  body_inputs[0] = Tensor::allocate(body.type(body.inputs()[0]));
  body_inputs[1] = Tensor::allocate(body.type(body.inputs()[1]));
  std::vector<Tensor> body_outputs = allocate_all(body, body.outputs());
  std::vector<Tensor> spare =
      allocate_all(body, std::span<const ValueId>(body.outputs()).subspan(1, carried));

  std::int64_t done = 0;
  for (; (!bounded || done < trip_count) && condition; ++done) {
    check_loop_iterations(node, done);
    // Checked at compile time: one int64 and one bool element.
    *body_inputs[0].data<std::int64_t>() = done;
    *body_inputs[1].data<bool>() = condition;
    run_body(0, body_inputs, body_outputs);
    condition = body_outputs[0].int_at(0) != 0;
    for (std::size_t i = 0; i < carried; ++i) {
      // This iteration's results are the next one's inputs; the next one
      // writes into the buffers this one read (or fresh ones, the first time).
      body_inputs[2 + i] = body_outputs[1 + i];
      body_outputs[1 + i] = spare[i];
      spare[i] = body_inputs[2 + i];
    }
    for (std::size_t k = 0; k < scanned; ++k) {
      Tensor& whole = outputs[carried + k];
      if (done >= whole.shape()[0]) {
        throw Error(fmt::format("the loop ran more iterations than the {} its scan outputs were "
                                "planned for",
                                whole.shape()[0]),
                    {.node = node.name});
      }
      move_slice(whole, 0, done, body_outputs[1 + carried + k], /*to_whole=*/true);
    }
  }
  for (std::size_t k = 0; k < scanned; ++k) {
    if (done != outputs[carried + k].shape()[0]) {
      throw Error(fmt::format("the loop stopped after {} iterations, but its scan outputs were "
                              "planned for {}: outputs whose length depends on the data are not "
                              "supported",
                              done, outputs[carried + k].shape()[0]),
                  {.node = node.name});
    }
  }
  for (std::size_t i = 0; i < carried; ++i) copy_into(body_inputs[2 + i], outputs[i]);
}

// --- Scan (opset 9 and later) ---

struct ScanLayout {
  std::size_t states = 0;
  std::size_t scan_inputs = 0;
  std::vector<std::int64_t> input_axes, input_directions, output_axes, output_directions;
};

ScanLayout scan_layout(const Node& node, std::size_t scan_outputs) {
  ScanLayout layout;
  layout.scan_inputs = static_cast<std::size_t>(node.attributes.get_int("num_scan_inputs"));
  layout.states = formal_inputs(node) - layout.scan_inputs;
  auto list = [&](const char* name, std::size_t count) {
    std::vector<std::int64_t> values = node.attributes.get_ints(name, {});
    if (values.empty()) values.assign(count, 0);
    return values;
  };
  layout.input_axes = list("scan_input_axes", layout.scan_inputs);
  layout.input_directions = list("scan_input_directions", layout.scan_inputs);
  layout.output_axes = list("scan_output_axes", scan_outputs);
  layout.output_directions = list("scan_output_directions", scan_outputs);
  return layout;
}

bool check_scan(const Graph& graph, const Node& node) {
  const Graph* body = branch(node, "body");
  if (body == nullptr || graph.opset < 9 || !node.attributes.has("num_scan_inputs")) return false;
  const std::size_t formal = formal_inputs(node);
  const auto scan_inputs = static_cast<std::size_t>(node.attributes.get_int("num_scan_inputs"));
  if (scan_inputs < 1 || scan_inputs > formal) return false;
  const std::size_t states = formal - scan_inputs;
  if (node.outputs.size() < states || body->outputs().size() != node.outputs.size() ||
      body->inputs().size() != formal + static_cast<std::size_t>(body->captured) ||
      !body_supported(*body)) {
    return false;
  }
  if (!captured_types_match(graph, node, *body)) return false;
  const ScanLayout layout = scan_layout(node, node.outputs.size() - states);
  if (layout.input_axes.size() != scan_inputs || layout.input_directions.size() != scan_inputs ||
      layout.output_axes.size() != node.outputs.size() - states ||
      layout.output_directions.size() != node.outputs.size() - states) {
    return false;
  }
  std::int64_t length = -1;
  for (std::size_t j = 0; j < scan_inputs; ++j) {
    const TensorType& type = graph.type(node.inputs[states + j]);
    const std::int64_t axis = normalized_axis(layout.input_axes[j], type.rank());
    if (axis < 0 || axis >= type.rank()) return false;
    const std::int64_t dim = type.shape[static_cast<std::size_t>(axis)];
    if (length >= 0 && dim != length) return false;
    length = dim;
  }
  for (std::size_t k = 0; k < layout.output_axes.size(); ++k) {
    const TensorType& type = graph.type(node.outputs[states + k]);
    const std::int64_t axis = normalized_axis(layout.output_axes[k], type.rank());
    if (axis < 0 || axis >= type.rank() || type.shape[static_cast<std::size_t>(axis)] != length ||
        !(without_axis(type, axis) == body->type(body->outputs()[states + k]))) {
      return false;
    }
  }
  for (std::size_t j = 0; j < scan_inputs; ++j) {
    const TensorType& type = graph.type(node.inputs[states + j]);
    const std::int64_t axis = normalized_axis(layout.input_axes[j], type.rank());
    if (!(without_axis(type, axis) == body->type(body->inputs()[states + j]))) return false;
  }
  for (std::size_t i = 0; i < states; ++i) {
    const TensorType& state = graph.type(node.inputs[i]);
    if (!(state == body->type(body->inputs()[i])) || !(state == body->type(body->outputs()[i])) ||
        !(state == graph.type(node.outputs[i]))) {
      return false;
    }
  }
  return true;
}

void scan_semantics(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                    std::span<Tensor> outputs, const BodyRun& run_body) {
  const Graph& body = *branch(node, "body");
  const std::size_t formal = formal_inputs(node);
  const std::size_t states =
      formal - static_cast<std::size_t>(node.attributes.get_int("num_scan_inputs"));
  const std::size_t scanned = outputs.size() - states;
  const ScanLayout layout = scan_layout(node, scanned);

  // States alternate between two sets of buffers, as a Loop's carried values.
  std::vector<Tensor> body_inputs(body.inputs().size());
  for (std::size_t i = 0; i < states; ++i) body_inputs[i] = inputs[i];
  for (std::size_t j = 0; j < layout.scan_inputs; ++j) {
    body_inputs[states + j] = Tensor::allocate(body.type(body.inputs()[states + j]));
  }
  for (std::size_t i = formal; i < inputs.size(); ++i) body_inputs[i] = inputs[i];
  std::vector<Tensor> body_outputs = allocate_all(body, body.outputs());
  std::vector<Tensor> spare =
      allocate_all(body, std::span<const ValueId>(body.outputs()).subspan(0, states));
  std::vector<Tensor> wholes(inputs.begin() + static_cast<std::ptrdiff_t>(states),
                             inputs.begin() + static_cast<std::ptrdiff_t>(formal));
  const TensorType& first = graph.type(node.inputs[states]);
  const std::int64_t length =
      first.shape[static_cast<std::size_t>(normalized_axis(layout.input_axes[0], first.rank()))];

  for (std::int64_t t = 0; t < length; ++t) {
    for (std::size_t j = 0; j < layout.scan_inputs; ++j) {
      const std::int64_t index = layout.input_directions[j] != 0 ? length - 1 - t : t;
      move_slice(wholes[j], normalized_axis(layout.input_axes[j], wholes[j].rank()), index,
                 body_inputs[states + j], /*to_whole=*/false);
    }
    run_body(0, body_inputs, body_outputs);
    for (std::size_t i = 0; i < states; ++i) {
      body_inputs[i] = body_outputs[i];
      body_outputs[i] = spare[i];
      spare[i] = body_inputs[i];
    }
    for (std::size_t k = 0; k < scanned; ++k) {
      Tensor& whole = outputs[states + k];
      const std::int64_t index = layout.output_directions[k] != 0 ? length - 1 - t : t;
      move_slice(whole, normalized_axis(layout.output_axes[k], whole.rank()), index,
                 body_outputs[states + k], /*to_whole=*/true);
    }
  }
  for (std::size_t i = 0; i < states; ++i) copy_into(body_inputs[i], outputs[i]);
}

// The op entries run bodies node by node (constant folding, the evaluator);
// compiled native kernels run them as compiled kernels instead
// (run_control_flow with their own BodyRun).
BodyRun interpreted(const Node& node, int threads) {
  return [&node, threads](std::size_t index, std::span<const Tensor> inputs,
                          std::span<Tensor> outputs) {
    const Graph& body = *bodies(node)[index];
    std::vector<Tensor> results = run_body(body, inputs, threads);
    for (std::size_t i = 0; i < outputs.size(); ++i) copy_into(results[i], outputs[i]);
  };
}

void run_if(const Graph&, const Node& node, std::span<const Tensor> inputs,
            std::span<Tensor> outputs, int threads) {
  if_semantics(node, inputs, outputs, interpreted(node, threads));
}

void run_loop(const Graph&, const Node& node, std::span<const Tensor> inputs,
              std::span<Tensor> outputs, int threads) {
  loop_semantics(node, inputs, outputs, interpreted(node, threads));
}

void run_scan(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
              std::span<Tensor> outputs, int threads) {
  scan_semantics(graph, node, inputs, outputs, interpreted(node, threads));
}

const OpEntry kControlFlowOps[] = {
    {"If", run_if, check_if},
    {"Loop", run_loop, check_loop},
    {"Scan", run_scan, check_scan},
};

}  // namespace

std::span<const OpEntry> control_flow_ops() { return kControlFlowOps; }

void run_control_flow(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                      std::span<Tensor> outputs, const BodyRun& run_body) {
  if (node.op_type == "If") {
    if_semantics(node, inputs, outputs, run_body);
  } else if (node.op_type == "Loop") {
    loop_semantics(node, inputs, outputs, run_body);
  } else {
    scan_semantics(graph, node, inputs, outputs, run_body);
  }
}

}  // namespace collage::native
