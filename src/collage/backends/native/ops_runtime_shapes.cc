// Runtime-shaped regions (ir/runtime_shapes.h) and the ops whose output
// sizes depend on the data: NonZero, Compress, NonMaxSuppression, Unique.
//
// A region runs its body node by node. Each node is typed for this run: a
// graph of the node alone, its inputs of the shapes they have now (small
// integer inputs, which say sizes, as the constants they are now), goes
// through the same shape inference as import (installed with
// set_runtime_typing). A node whose output shapes that settles runs by its
// op entry, as anywhere else; one whose output sizes follow its data (the
// ops here) computes its result first and takes the size it found.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <vector>

#include "collage/backends/native/op_registry.h"
#include "collage/ir/error.h"
#include "collage/ir/passes/partial_type.h"
#include "collage/ir/runtime_shapes.h"

namespace collage::native {
namespace {

// Outputs of an op whose sizes follow its data, computed from its inputs.
using DataDependentRun = std::vector<Tensor> (*)(const Graph& graph, const Node& node,
                                                 std::span<const Tensor> inputs);

std::int64_t axis_attribute(const Node& node, std::int64_t rank, std::int64_t fallback) {
  std::int64_t axis = node.attributes.get_int("axis", fallback);
  if (axis < -rank || axis >= rank) {
    throw Error(fmt::format("axis {} is out of range for rank {}", axis, rank),
                {.node = node.name});
  }
  return axis < 0 ? axis + rank : axis;
}

std::int64_t product(const Shape& shape, std::size_t from, std::size_t to) {
  std::int64_t count = 1;
  for (std::size_t i = from; i < to; ++i) count *= shape[i];
  return count;
}

std::vector<Tensor> run_non_zero(const Graph&, const Node& node, std::span<const Tensor> inputs) {
  const Tensor& x = inputs[0];
  const auto rank = static_cast<std::int64_t>(x.rank());
  std::vector<std::int64_t> found;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    if (x.number_at(i) != 0) found.push_back(i);
  }
  const auto count = static_cast<std::int64_t>(found.size());
  Tensor y = Tensor::allocate(TensorType{DType::kInt64, {std::max<std::int64_t>(rank, 1), count}});
  std::int64_t* out = y.data<std::int64_t>();
  if (rank == 0) {
    std::fill(out, out + count, 0);
    return {y};
  }
  (void)node;
  for (std::int64_t k = 0; k < count; ++k) {
    std::int64_t flat = found[static_cast<std::size_t>(k)];
    for (std::int64_t axis = rank - 1; axis >= 0; --axis) {
      const std::int64_t dim = x.shape()[static_cast<std::size_t>(axis)];
      out[axis * count + k] = flat % dim;
      flat /= dim;
    }
  }
  return {y};
}

// A tensor seen as [outer, length, inner] around the node's "axis"; without
// one, as its elements in a row.
struct AxisSplit {
  bool flat = true;
  std::size_t axis = 0;
  std::int64_t outer = 1;
  std::int64_t length = 0;
  std::int64_t inner = 1;
};

AxisSplit split_at_axis(const Node& node, const Tensor& x) {
  AxisSplit split;
  split.length = x.numel();
  if (!node.attributes.has("axis")) return split;
  const Shape& shape = x.shape();
  split.flat = false;
  split.axis = static_cast<std::size_t>(axis_attribute(node, x.rank(), 0));
  split.outer = product(shape, 0, split.axis);
  split.length = shape[split.axis];
  split.inner = product(shape, split.axis + 1, shape.size());
  return split;
}

// The slices of `x` at the indices `picked` along the split's axis, in that
// order.
Tensor take_slices(const Tensor& x, const AxisSplit& split,
                   const std::vector<std::int64_t>& picked) {
  const auto count = static_cast<std::int64_t>(picked.size());
  Shape shape = split.flat ? Shape{count} : x.shape();
  if (!split.flat) shape[split.axis] = count;
  Tensor y = Tensor::allocate(TensorType{x.dtype(), shape});
  const auto* from = static_cast<const char*>(x.raw());
  auto* to = static_cast<char*>(y.raw());
  const std::size_t slice = static_cast<std::size_t>(split.inner) * dtype_size(x.dtype());
  for (std::int64_t o = 0; o < split.outer; ++o) {
    for (std::int64_t k = 0; k < count; ++k) {
      const std::int64_t i = picked[static_cast<std::size_t>(k)];
      std::memcpy(to + static_cast<std::size_t>(o * count + k) * slice,
                  from + static_cast<std::size_t>(o * split.length + i) * slice, slice);
    }
  }
  return y;
}

std::vector<Tensor> run_compress(const Graph&, const Node& node, std::span<const Tensor> inputs) {
  const Tensor& x = inputs[0];
  const Tensor& condition = inputs[1];
  const AxisSplit split = split_at_axis(node, x);
  if (condition.numel() > split.length) {
    throw Error(fmt::format("the condition has {} elements, more than the {} it selects from",
                            condition.numel(), split.length),
                {.node = node.name});
  }
  std::vector<std::int64_t> kept;
  for (std::int64_t i = 0; i < condition.numel(); ++i) {
    if (condition.number_at(i) != 0) kept.push_back(i);
  }
  return {take_slices(x, split, kept)};
}

// A box as its corners, lowest first.
struct Box {
  double y1, x1, y2, x2;
};

Box box_at(const Tensor& boxes, std::int64_t offset, bool center) {
  const double a = boxes.number_at(offset);
  const double b = boxes.number_at(offset + 1);
  const double c = boxes.number_at(offset + 2);
  const double d = boxes.number_at(offset + 3);
  if (center) return Box{b - d / 2, a - c / 2, b + d / 2, a + c / 2};
  return Box{std::min(a, c), std::min(b, d), std::max(a, c), std::max(b, d)};
}

double iou(const Box& a, const Box& b) {
  const double area_a = (a.y2 - a.y1) * (a.x2 - a.x1);
  const double area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
  if (area_a <= 0 || area_b <= 0) return 0;
  const double h = std::max(0.0, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
  const double w = std::max(0.0, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
  const double overlap = h * w;
  return overlap / (area_a + area_b - overlap);
}

std::vector<Tensor> run_non_max_suppression(const Graph&, const Node& node,
                                            std::span<const Tensor> inputs) {
  const Tensor& boxes = inputs[0];
  const Tensor& scores = inputs[1];
  if (boxes.rank() != 3 || boxes.shape()[2] != 4 || scores.rank() != 3 ||
      scores.shape()[0] != boxes.shape()[0] || scores.shape()[2] != boxes.shape()[1]) {
    throw Error(fmt::format("boxes {} and scores {} are not [batch, boxes, 4] and [batch, "
                            "classes, boxes]",
                            boxes.type().to_string(), scores.type().to_string()),
                {.node = node.name});
  }
  auto scalar = [&](std::size_t i, double fallback) {
    return inputs.size() > i && !inputs[i].empty() && inputs[i].numel() > 0 ? inputs[i].number_at(0)
                                                                            : fallback;
  };
  // torchvision passes the int64 maximum: read as the integer it is.
  const std::int64_t max_per_class =
      inputs.size() > 2 && !inputs[2].empty() && inputs[2].numel() > 0 ? inputs[2].int_at(0) : 0;
  const double iou_threshold = scalar(3, 0);
  const bool has_score_threshold = inputs.size() > 4 && !inputs[4].empty();
  const double score_threshold = scalar(4, 0);
  const bool center = node.attributes.get_int("center_point_box", 0) == 1;
  const std::int64_t batches = boxes.shape()[0];
  const std::int64_t count = boxes.shape()[1];
  const std::int64_t classes = scores.shape()[1];
  std::vector<std::int64_t> selected;
  for (std::int64_t b = 0; b < batches && max_per_class > 0; ++b) {
    std::vector<Box> corners(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i)
      corners[static_cast<std::size_t>(i)] = box_at(boxes, (b * count + i) * 4, center);
    for (std::int64_t c = 0; c < classes; ++c) {
      const std::int64_t base = (b * classes + c) * count;
      std::vector<std::int64_t> order;
      for (std::int64_t i = 0; i < count; ++i) {
        if (!has_score_threshold || scores.number_at(base + i) > score_threshold)
          order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t l, std::int64_t r) {
        return scores.number_at(base + l) > scores.number_at(base + r);
      });
      std::vector<std::int64_t> kept;
      for (std::int64_t i : order) {
        if (static_cast<std::int64_t>(kept.size()) >= max_per_class) break;
        const Box& box = corners[static_cast<std::size_t>(i)];
        const bool suppressed = std::any_of(kept.begin(), kept.end(), [&](std::int64_t k) {
          return iou(corners[static_cast<std::size_t>(k)], box) > iou_threshold;
        });
        if (!suppressed) kept.push_back(i);
      }
      for (std::int64_t i : kept) selected.insert(selected.end(), {b, c, i});
    }
  }
  const auto rows = static_cast<std::int64_t>(selected.size() / 3);
  Tensor y = Tensor::allocate(TensorType{DType::kInt64, {rows, 3}});
  std::copy(selected.begin(), selected.end(), y.data<std::int64_t>());
  return {y};
}

std::vector<Tensor> run_unique(const Graph&, const Node& node, std::span<const Tensor> inputs) {
  const Tensor& x = inputs[0];
  const bool sorted = node.attributes.get_int("sorted", 1) != 0;
  const AxisSplit split = split_at_axis(node, x);
  const std::int64_t length = split.length;
  const std::int64_t inner = split.inner;
  // Slice i: the elements at index i along the axis, in order.
  auto element = [&](std::int64_t i, std::int64_t e) {
    return x.number_at((e / inner) * length * inner + i * inner + e % inner);
  };
  const std::int64_t slice_size = split.outer * inner;
  auto less = [&](std::int64_t a, std::int64_t b) {
    for (std::int64_t e = 0; e < slice_size; ++e) {
      const double l = element(a, e);
      const double r = element(b, e);
      if (l != r) return l < r;
    }
    return false;
  };
  // Distinct slices by first occurrence, and each slice's distinct one.
  std::vector<std::int64_t> firsts;
  std::vector<std::int64_t> which(static_cast<std::size_t>(length));
  std::map<std::int64_t, std::int64_t, decltype(less)> seen(less);
  for (std::int64_t i = 0; i < length; ++i) {
    auto [it, added] = seen.try_emplace(i, static_cast<std::int64_t>(firsts.size()));
    if (added) firsts.push_back(i);
    which[static_cast<std::size_t>(i)] = it->second;
  }
  std::vector<std::int64_t> order(firsts.size());
  std::iota(order.begin(), order.end(), 0);
  if (sorted) {
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
      return less(firsts[static_cast<std::size_t>(a)], firsts[static_cast<std::size_t>(b)]);
    });
  }
  const auto unique = static_cast<std::int64_t>(order.size());
  std::vector<std::int64_t> position(order.size());
  std::vector<std::int64_t> picked(order.size());
  Tensor indices = Tensor::allocate(TensorType{DType::kInt64, {unique}});
  for (std::size_t k = 0; k < order.size(); ++k) {
    position[static_cast<std::size_t>(order[k])] = static_cast<std::int64_t>(k);
    picked[k] = firsts[static_cast<std::size_t>(order[k])];
    indices.data<std::int64_t>()[k] = picked[k];
  }
  Tensor counts = Tensor::zeros(TensorType{DType::kInt64, {unique}});
  Tensor inverse = Tensor::allocate(TensorType{DType::kInt64, {length}});
  for (std::int64_t i = 0; i < length; ++i) {
    const std::int64_t k = position[static_cast<std::size_t>(which[static_cast<std::size_t>(i)])];
    inverse.data<std::int64_t>()[i] = k;
    ++counts.data<std::int64_t>()[k];
  }
  return {take_slices(x, split, picked), indices, inverse, counts};
}

struct DataDependentOp {
  std::string_view op_type;
  DataDependentRun run;
};

constexpr DataDependentOp kDataDependentOps[] = {
    {"NonZero", run_non_zero},
    {"Compress", run_compress},
    {"NonMaxSuppression", run_non_max_suppression},
    {"Unique", run_unique},
};

DataDependentRun data_dependent(const Node& node) {
  if (!node.domain.empty()) return nullptr;
  for (const DataDependentOp& op : kDataDependentOps) {
    if (op.op_type == node.op_type) return op.run;
  }
  return nullptr;
}

// Writes `results` into `outputs`, whose types inference settled (constant
// folding, or a region's node typed for this run): they must agree.
void copy_results(const Node& node, const std::vector<Tensor>& results, std::span<Tensor> outputs) {
  for (std::size_t i = 0; i < outputs.size() && i < results.size(); ++i) {
    if (outputs[i].empty()) continue;
    if (outputs[i].type() != results[i].type()) {
      throw Error(fmt::format("output {} is {} where {} was expected", i,
                              results[i].type().to_string(), outputs[i].type().to_string()),
                  {.node = node.name});
    }
    if (results[i].byte_size() > 0)
      std::memcpy(outputs[i].raw(), results[i].raw(), results[i].byte_size());
  }
}

template <DataDependentRun kRun>
void run_into_outputs(const Graph& graph, const Node& node, std::span<const Tensor> inputs,
                      std::span<Tensor> outputs, int) {
  copy_results(node, kRun(graph, node, inputs), outputs);
}

bool accept(const Graph&, const Node&) { return true; }

// Whether a tensor may say sizes: small and of an integer type (a shape, a
// K), or a single number (Range's limit). Such inputs are given to
// inference as the constants they are in this run.
bool says_sizes(const Tensor& tensor) {
  const bool integer = tensor.dtype() == DType::kInt64 || tensor.dtype() == DType::kInt32;
  return (integer && tensor.numel() <= 64) || tensor.numel() == 1;
}

// Runs `node` of a region's `body` on `inputs` as they are in this run.
std::vector<Tensor> run_at_run_time(const Graph& body, const Node& node,
                                    std::span<const Tensor> inputs, int threads) {
  Graph alone;
  alone.opset = body.opset;
  alone.other_opsets = body.other_opsets;
  std::map<ValueId, ValueId> mapped;
  std::vector<ValueId> node_inputs;
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId id = node.inputs[i];
    if (id == kNoValue || inputs[i].empty()) {
      node_inputs.push_back(kNoValue);
      continue;
    }
    auto [it, added] = mapped.try_emplace(id, kNoValue);
    if (added) {
      const std::string& name = body.value(id).name;
      it->second = says_sizes(inputs[i]) ? alone.add_constant(name, inputs[i])
                                         : alone.add_input(name, inputs[i].type());
    }
    node_inputs.push_back(it->second);
  }
  std::vector<ValueId> node_outputs;
  for (ValueId id : node.outputs)
    node_outputs.push_back(alone.add_value(body.value(id).name, unknown_type(body.type(id).dtype)));
  const NodeId copy =
      alone.add_node(node.op_type, node_inputs, node_outputs, node.attributes, node.name);
  alone.node(copy).domain = node.domain;
  for (ValueId id : node_outputs) alone.add_output(id);
  type_at_run_time(alone);

  const Node& typed = alone.node(copy);
  const bool settled = std::all_of(node_outputs.begin(), node_outputs.end(),
                                   [&](ValueId id) { return is_static(alone.type(id)); });
  std::vector<Tensor> outputs;
  if (!settled) {
    const DataDependentRun run = data_dependent(node);
    if (run == nullptr) {
      throw Error(fmt::format("the shape of its output is still unknown with its inputs known "
                              "({}), so it cannot run",
                              partial_type_to_string(alone.type(node_outputs.front()))),
                  {.node = node.name});
    }
    outputs = run(alone, typed, inputs);
  } else {
    const OpEntry* entry = find_op(typed);
    if (entry == nullptr || !node_supported(alone, typed)) {
      throw Error(fmt::format("the native kernels do not run {} for these inputs", node.op_type),
                  {.node = node.name});
    }
    for (ValueId id : node_outputs) outputs.push_back(Tensor::allocate(alone.type(id)));
    entry->run(alone, typed, inputs, outputs, threads);
  }
  const std::int64_t budget = runtime_memory_budget();
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (budget <= 0 || static_cast<std::int64_t>(outputs[i].byte_size()) <= budget) continue;
    throw Error(fmt::format("its output {} needs {} bytes when the model runs, more than the "
                            "memory budget of {} (--max-memory)",
                            outputs[i].type().to_string(), outputs[i].byte_size(), budget),
                {.node = node.name});
  }
  return outputs;
}

// Runs `body` node by node on `inputs` (one per body input), each node
// typed as it runs; returns its outputs.
std::vector<Tensor> interpret(const Graph& body, std::span<const Tensor> inputs, int threads);

// An If in a region: its condition picks the branch, which runs like the
// region itself, on the values the If passes it (the branches' captured
// inputs; an If has no formal ones but its condition).
std::vector<Tensor> run_if(const Node& node, std::span<const Tensor> inputs, int threads) {
  if (inputs.empty() || inputs[0].empty() || inputs[0].numel() != 1) {
    throw Error("its condition is not one value", {.node = node.name});
  }
  const char* branch = inputs[0].number_at(0) != 0 ? "then_branch" : "else_branch";
  const Graph& body = *node.attributes.get_graph(branch);
  if (body.inputs().size() != inputs.size() - 1) {
    throw Error(fmt::format("its {} takes {} inputs where the If passes {}", branch,
                            body.inputs().size(), inputs.size() - 1),
                {.node = node.name});
  }
  return interpret(body, inputs.subspan(1), threads);
}

std::vector<Tensor> interpret(const Graph& body, std::span<const Tensor> inputs, int threads) {
  return run_node_by_node(body, inputs, [&](const Node& node, std::span<const Tensor> in) {
    if (node.op_type == "If" && node.domain.empty()) return run_if(node, in, threads);
    return run_at_run_time(body, node, in, threads);
  });
}

void run_region(const Graph&, const Node& node, std::span<const Tensor> inputs,
                std::span<Tensor> outputs, int threads) {
  const Graph& body = *node.attributes.get_graph("body");
  const std::vector<Tensor> values = interpret(body, inputs, threads);
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    const Tensor& result = values[k];
    if (outputs[k].type().at_run_time) {
      outputs[k] = result;
      continue;
    }
    if (result.type() != outputs[k].type()) {
      throw Error(fmt::format("{} is {} when the model runs, where {} was inferred",
                              body.value(body.outputs()[k]).name, result.type().to_string(),
                              outputs[k].type().to_string()),
                  {.node = node.name});
    }
    if (result.byte_size() > 0) std::memcpy(outputs[k].raw(), result.raw(), result.byte_size());
  }
}

// A region runs when every node of its body has an entry; each is checked
// for the types it has when it runs.
bool check_region(const Graph&, const Node& node) {
  if (!node.attributes.has("body")) return false;
  const Graph& body = *node.attributes.get_graph("body");
  return std::all_of(body.nodes().begin(), body.nodes().end(),
                     [](const Node& inner) { return find_op(inner) != nullptr; });
}

constexpr OpEntry kRuntimeShapeOps[] = {
    {"collage.RuntimeShapes", run_region, check_region},
    {"NonZero", run_into_outputs<run_non_zero>, accept},
    {"Compress", run_into_outputs<run_compress>, accept},
    {"NonMaxSuppression", run_into_outputs<run_non_max_suppression>, accept},
    {"Unique", run_into_outputs<run_unique>, accept},
};

}  // namespace

std::span<const OpEntry> runtime_shape_ops() { return kRuntimeShapeOps; }

}  // namespace collage::native
