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
#include <cstddef>
#include <cstring>
#include <map>
#include <numeric>
#include <span>
#include <vector>

#include "collage/backends/native/op_registry.h"
#include "collage/ir/control_flow.h"
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

// The boxes one class keeps, on a grid of cells about a box's size, so that
// each new box is compared only with the kept boxes it may overlap (an IoU
// above a threshold of 0 or more needs an overlap). torchvision offsets each
// class's boxes apart and suppresses all classes as one, tens of thousands
// of boxes that a comparison with every kept box takes a third of a second
// over.
class KeptBoxes {
 public:
  // `candidates`: every box that may be kept, to size the grid.
  explicit KeptBoxes(std::span<const Box> candidates) {
    double width = 0;
    double height = 0;
    std::int64_t sized = 0;
    for (const Box& box : candidates) {
      if (!finite(box)) continue;
      if (sized == 0) bounds_ = {box.y1, box.x1, box.y2, box.x2};
      bounds_.y1 = std::min(bounds_.y1, box.y1);
      bounds_.x1 = std::min(bounds_.x1, box.x1);
      bounds_.y2 = std::max(bounds_.y2, box.y2);
      bounds_.x2 = std::max(bounds_.x2, box.x2);
      width += box.x2 - box.x1;
      height += box.y2 - box.y1;
      ++sized;
    }
    if (sized == 0) return;
    cell_width_ =
        std::max(width / static_cast<double>(sized), (bounds_.x2 - bounds_.x1) / kMaxCellsPerSide);
    cell_height_ =
        std::max(height / static_cast<double>(sized), (bounds_.y2 - bounds_.y1) / kMaxCellsPerSide);
    if (!(cell_width_ > 0) || !(cell_height_ > 0)) return;
    columns_ = cell_of(bounds_.x2, bounds_.x1, cell_width_) + 1;
    rows_ = cell_of(bounds_.y2, bounds_.y1, cell_height_) + 1;
    cells_.resize(static_cast<std::size_t>(columns_ * rows_));
  }

  // Whether `box` overlaps a kept box by more than `threshold` IoU.
  template <typename Suppresses>
  bool suppressed(const Box& box, Suppresses&& suppresses) const {
    if (!gridded(box)) return std::any_of(all_.begin(), all_.end(), suppresses);
    if (std::any_of(unplaced_.begin(), unplaced_.end(), suppresses)) return true;
    const Span span = span_of(box);
    for (std::int64_t row = span.row1; row <= span.row2; ++row) {
      for (std::int64_t column = span.column1; column <= span.column2; ++column) {
        const auto& cell = cells_[static_cast<std::size_t>(row * columns_ + column)];
        if (std::any_of(cell.begin(), cell.end(), suppresses)) return true;
      }
    }
    return false;
  }

  void keep(std::int64_t index, const Box& box) {
    all_.push_back(index);
    if (!gridded(box)) {
      unplaced_.push_back(index);
      return;
    }
    const Span span = span_of(box);
    for (std::int64_t row = span.row1; row <= span.row2; ++row) {
      for (std::int64_t column = span.column1; column <= span.column2; ++column)
        cells_[static_cast<std::size_t>(row * columns_ + column)].push_back(index);
    }
  }

  const std::vector<std::int64_t>& all() const { return all_; }

 private:
  static constexpr double kMaxCellsPerSide = 256;
  // A box over more cells than this is compared with every kept box.
  static constexpr std::int64_t kMaxCellsPerBox = 64;

  struct Span {
    std::int64_t row1, column1, row2, column2;
  };

  static bool finite(const Box& box) {
    return std::isfinite(box.x1) && std::isfinite(box.y1) && std::isfinite(box.x2) &&
           std::isfinite(box.y2);
  }

  static std::int64_t cell_of(double at, double from, double size) {
    return static_cast<std::int64_t>(std::floor((at - from) / size));
  }

  Span span_of(const Box& box) const {
    return {std::clamp<std::int64_t>(cell_of(box.y1, bounds_.y1, cell_height_), 0, rows_ - 1),
            std::clamp<std::int64_t>(cell_of(box.x1, bounds_.x1, cell_width_), 0, columns_ - 1),
            std::clamp<std::int64_t>(cell_of(box.y2, bounds_.y1, cell_height_), 0, rows_ - 1),
            std::clamp<std::int64_t>(cell_of(box.x2, bounds_.x1, cell_width_), 0, columns_ - 1)};
  }

  // Whether `box` lies on the grid, over few enough cells.
  bool gridded(const Box& box) const {
    if (cells_.empty() || !finite(box) || box.x1 < bounds_.x1 || box.y1 < bounds_.y1 ||
        box.x2 > bounds_.x2 || box.y2 > bounds_.y2) {
      return false;
    }
    const Span span = span_of(box);
    return (span.row2 - span.row1 + 1) * (span.column2 - span.column1 + 1) <= kMaxCellsPerBox;
  }

  Box bounds_{0, 0, 0, 0};
  double cell_width_ = 0;
  double cell_height_ = 0;
  std::int64_t columns_ = 0;
  std::int64_t rows_ = 0;
  std::vector<std::vector<std::int64_t>> cells_;
  std::vector<std::int64_t> unplaced_;
  std::vector<std::int64_t> all_;
};

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
      std::vector<double> score(static_cast<std::size_t>(count));
      std::vector<std::int64_t> order;
      std::vector<Box> candidates;
      for (std::int64_t i = 0; i < count; ++i) {
        score[static_cast<std::size_t>(i)] = scores.number_at(base + i);
        if (!has_score_threshold || score[static_cast<std::size_t>(i)] > score_threshold) {
          order.push_back(i);
          candidates.push_back(corners[static_cast<std::size_t>(i)]);
        }
      }
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t l, std::int64_t r) {
        return score[static_cast<std::size_t>(l)] > score[static_cast<std::size_t>(r)];
      });
      // Below a threshold of 0, boxes apart suppress each other too: every
      // kept box is compared.
      KeptBoxes kept(iou_threshold >= 0 ? std::span<const Box>(candidates)
                                        : std::span<const Box>());
      for (std::int64_t i : order) {
        if (static_cast<std::int64_t>(kept.all().size()) >= max_per_class) break;
        const Box& box = corners[static_cast<std::size_t>(i)];
        const bool suppressed = kept.suppressed(box, [&](std::int64_t k) {
          return iou(corners[static_cast<std::size_t>(k)], box) > iou_threshold;
        });
        if (!suppressed) kept.keep(i, box);
      }
      for (std::int64_t i : kept.all()) selected.insert(selected.end(), {b, c, i});
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
// K), a few numbers (Resize's scales), or a single number (Range's limit).
// Such inputs are given to inference as the constants they are in this run.
bool says_sizes(const Tensor& tensor) {
  const bool integer = tensor.dtype() == DType::kInt64 || tensor.dtype() == DType::kInt32;
  return (integer && tensor.numel() <= 64) || tensor.numel() <= 8;
}

// Throws where one of `node`'s outputs in this run is larger than
// --max-memory allows.
void check_budget(const Node& node, std::span<const Tensor> outputs) {
  const std::int64_t budget = runtime_memory_budget();
  for (const Tensor& output : outputs) {
    if (budget <= 0 || static_cast<std::int64_t>(output.byte_size()) <= budget) continue;
    throw Error(fmt::format("its output {} needs {} bytes when the model runs, more than the "
                            "memory budget of {} (--max-memory)",
                            output.type().to_string(), output.byte_size(), budget),
                {.node = node.name});
  }
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
  check_budget(node, outputs);
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

// A scalar input of a Loop's body (iteration number, condition) holding
// `value`, of the shape the body declares (rank 0 or one element).
Tensor loop_scalar(const Graph& body, std::size_t input, DType dtype, std::int64_t value) {
  const TensorType& declared = body.type(body.inputs()[input]);
  const bool one_element = is_static(declared) && declared.numel() == 1;
  Tensor scalar = Tensor::allocate(TensorType{dtype, one_element ? declared.shape : Shape{}});
  if (dtype == DType::kBool) {
    *scalar.data<bool>() = value != 0;
  } else {
    *scalar.data<std::int64_t>() = value;
  }
  return scalar;
}

// The slices a Loop's scan output gathered, one per iteration, stacked along
// a new first axis. With no iteration, its dimensions the body leaves open
// are 0.
Tensor stack_slices(const Node& node, const TensorType& partial, std::span<const Tensor> slices) {
  TensorType slice = slices.empty() ? at_run_time_type(partial) : slices.front().type();
  slice.at_run_time = false;
  for (const Tensor& each : slices) {
    if (each.type() != slice) {
      throw Error(fmt::format("its scan output is {} in one iteration and {} in another: every "
                              "iteration must give the same shape",
                              slice.to_string(), each.type().to_string()),
                  {.node = node.name});
    }
  }
  TensorType whole = slice;
  whole.shape.insert(whole.shape.begin(), static_cast<std::int64_t>(slices.size()));
  Tensor stacked = Tensor::allocate(whole);
  auto* to = static_cast<std::byte*>(stacked.raw());
  for (const Tensor& each : slices) {
    if (each.byte_size() > 0) std::memcpy(to, each.raw(), each.byte_size());
    to += each.byte_size();
  }
  return stacked;
}

// A Loop in a region: each iteration runs the body like the region, on the
// values of that iteration, so carried values may change shape and the
// trip count may be known only now. Scan outputs stack each iteration's
// slice.
std::vector<Tensor> run_loop(const Node& node, std::span<const Tensor> inputs, int threads) {
  const Graph& body = *node.attributes.get_graph("body");
  const std::size_t formal = formal_inputs(node);
  if (formal < 2 || body.inputs().size() != inputs.size() ||
      body.outputs().size() != node.outputs.size() + 1 || body.outputs().size() < formal - 1) {
    throw Error("its body does not take and give what the Loop passes and defines",
                {.node = node.name});
  }
  const std::size_t carried = formal - 2;
  const std::size_t scanned = body.outputs().size() - 1 - carried;
  const bool bounded = !inputs[0].empty();
  const std::int64_t trip_count = bounded ? inputs[0].int_at(0) : 0;
  bool condition = inputs[1].empty() || inputs[1].int_at(0) != 0;
  std::vector<Tensor> values(inputs.begin(), inputs.end());
  std::vector<std::vector<Tensor>> slices(scanned);
  std::int64_t done = 0;
  for (; (!bounded || done < trip_count) && condition; ++done) {
    check_loop_iterations(node, done);
    values[0] = loop_scalar(body, 0, DType::kInt64, done);
    values[1] = loop_scalar(body, 1, DType::kBool, condition ? 1 : 0);
    std::vector<Tensor> results = interpret(body, values, threads);
    condition = results[0].int_at(0) != 0;
    for (std::size_t i = 0; i < carried; ++i) values[2 + i] = std::move(results[1 + i]);
    for (std::size_t k = 0; k < scanned; ++k)
      slices[k].push_back(std::move(results[1 + carried + k]));
  }
  std::vector<Tensor> outputs(values.begin() + 2,
                              values.begin() + 2 + static_cast<std::ptrdiff_t>(carried));
  for (std::size_t k = 0; k < scanned; ++k) {
    outputs.push_back(stack_slices(node, body.type(body.outputs()[1 + carried + k]), slices[k]));
  }
  check_budget(node, outputs);
  return outputs;
}

std::vector<Tensor> interpret(const Graph& body, std::span<const Tensor> inputs, int threads) {
  return run_node_by_node(body, inputs, [&](const Node& node, std::span<const Tensor> in) {
    if (node.op_type == "If" && node.domain.empty()) return run_if(node, in, threads);
    if (node.op_type == "Loop" && node.domain.empty()) return run_loop(node, in, threads);
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
