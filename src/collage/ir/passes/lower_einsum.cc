#include "collage/ir/passes/lower_einsum.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/ir/error.h"
#include "collage/ir/passes/partial_type.h"
#include "collage/ir/passes/rewrite_util.h"

namespace collage {
namespace {

// An index of the equation: a letter's character code, or for the
// dimensions "..." stands for, kEllipsis + their place counted from the
// right (so that the ellipses of operands of different ranks line up as
// numpy broadcasting does).
using Label = int;
constexpr Label kEllipsis = 256;

using Labels = std::vector<Label>;

bool contains(const Labels& labels, Label label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

struct Equation {
  std::vector<Labels> inputs;
  Labels output;
};

// One term of the equation for an operand of `rank` dimensions (or, for the
// output, `rank` = the widest ellipsis), "..." expanded.
Labels parse_term(std::string_view term, int rank, bool is_output, const std::string& where) {
  Labels letters_before, letters_after;
  bool ellipsis = false;
  for (std::size_t i = 0; i < term.size(); ++i) {
    if (term.substr(i, 3) == "...") {
      if (ellipsis) throw Error(fmt::format("{} has two ellipses", where));
      ellipsis = true;
      i += 2;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(term[i]);
    if (!std::isalpha(c)) {
      throw Error(fmt::format("{} has {}, which is neither a letter nor \"...\"", where,
                              quote_untrusted(std::string(1, term[i]))));
    }
    (ellipsis ? letters_after : letters_before).push_back(c);
  }
  const int letters = static_cast<int>(letters_before.size() + letters_after.size());
  const int ellipsis_rank = is_output ? (ellipsis ? rank : 0) : rank - letters;
  if (!is_output && (ellipsis_rank < 0 || (!ellipsis && ellipsis_rank != 0))) {
    throw Error(
        fmt::format("{} names {} dimensions, but its operand has {}", where, letters, rank));
  }
  Labels labels = letters_before;
  for (int d = ellipsis_rank; d-- > 0;) labels.push_back(kEllipsis + d);
  labels.insert(labels.end(), letters_after.begin(), letters_after.end());
  return labels;
}

Equation parse_equation(const std::string& text, const std::vector<int>& ranks) {
  std::string equation;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) equation.push_back(c);
  }
  const std::size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',') {
      terms.emplace_back();
    } else {
      terms.back().push_back(c);
    }
  }
  if (terms.size() != ranks.size()) {
    throw Error(fmt::format("equation {} has {} operand terms for {} inputs", quote_untrusted(text),
                            terms.size(), ranks.size()));
  }
  Equation parsed;
  int widest_ellipsis = 0;
  for (std::size_t k = 0; k < terms.size(); ++k) {
    parsed.inputs.push_back(parse_term(terms[k], ranks[k], false, fmt::format("operand {}", k)));
    const Labels& labels = parsed.inputs.back();
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (labels[i] >= kEllipsis) {
        widest_ellipsis = std::max(widest_ellipsis, labels[i] - kEllipsis + 1);
      } else if (std::count(labels.begin(), labels.end(), labels[i]) > 1) {
        throw Error(
            fmt::format("operand {} repeats index '{}' (a diagonal), which is not "
                        "supported",
                        k, static_cast<char>(labels[i])));
      }
    }
  }
  if (arrow != std::string::npos) {
    parsed.output = parse_term(std::string_view(equation).substr(arrow + 2), widest_ellipsis, true,
                               "the output");
    for (Label label : parsed.output) {
      if (std::count(parsed.output.begin(), parsed.output.end(), label) > 1) {
        throw Error(fmt::format("the output repeats index '{}'", static_cast<char>(label)));
      }
      const bool known = label >= kEllipsis ||
                         std::any_of(parsed.inputs.begin(), parsed.inputs.end(),
                                     [&](const Labels& input) { return contains(input, label); });
      if (!known) {
        throw Error(fmt::format("the output has index '{}', which no operand has",
                                static_cast<char>(label)));
      }
    }
    return parsed;
  }
  // Implicit output: the ellipsis, then the letters that appear once.
  for (int d = widest_ellipsis; d-- > 0;) parsed.output.push_back(kEllipsis + d);
  std::map<Label, int> uses;
  for (const Labels& input : parsed.inputs) {
    for (Label label : input) {
      if (label < kEllipsis) ++uses[label];
    }
  }
  for (const auto& [label, count] : uses) {
    if (count == 1) parsed.output.push_back(label);
  }
  return parsed;
}

// A value of the lowering with the index of each of its dimensions.
struct Operand {
  ValueId value;
  Labels labels;
};

// Emits the nodes of one Einsum, each named after it.
class Lowering {
 public:
  Lowering(Graph& graph, const Node& einsum)
      : graph_(graph), name_(einsum.name), dtype_(graph.type(einsum.outputs[0]).dtype) {}

  void record_size(Label label, std::int64_t size, const std::string& node) {
    auto [it, inserted] = sizes_.emplace(label, size);
    if (inserted || it->second == size || size == 1) return;
    if (it->second == 1) {
      it->second = size;
      return;
    }
    throw Error(fmt::format("index {} has size {} in one operand and {} in another",
                            label_name(label), it->second, size),
                {.node = node});
  }

  std::int64_t size(Label label) const { return sizes_.at(label); }

  // Drops the dimensions of size 1 whose index is larger elsewhere: they
  // broadcast, which is the same as not having the index.
  Operand squeeze_broadcast(Operand x) {
    Labels kept;
    for (std::size_t d = 0; d < x.labels.size(); ++d) {
      if (graph_.type(x.value).shape[d] == 1 && size(x.labels[d]) != 1) continue;
      kept.push_back(x.labels[d]);
    }
    if (kept.size() == x.labels.size()) return x;
    return {emit_reshape(x.value, shape_of(kept)), kept};
  }

  // Sums out the indices of `x` that `keep` does not contain.
  Operand reduce_to(Operand x, const Labels& keep) {
    std::vector<std::int64_t> axes;
    Labels kept;
    for (std::size_t d = 0; d < x.labels.size(); ++d) {
      if (contains(keep, x.labels[d])) {
        kept.push_back(x.labels[d]);
      } else {
        axes.push_back(static_cast<std::int64_t>(d));
      }
    }
    if (axes.empty()) return x;
    Attributes attributes;
    attributes.set("keepdims", std::int64_t{0});
    // Opset 13 moved the axes from an attribute to an input.
    std::vector<ValueId> inputs{x.value};
    if (graph_.opset >= 13) {
      inputs.push_back(constant("reduce_axes", axes));
    } else {
      attributes.set("axes", axes);
    }
    return {emit("ReduceSum", std::move(inputs), kept, std::move(attributes)), kept};
  }

  // `x` with its dimensions in the order of `order` (a permutation of its).
  Operand transpose_to(Operand x, const Labels& order) {
    if (order == x.labels) return x;
    std::vector<std::int64_t> perm;
    for (Label label : order) {
      perm.push_back(std::find(x.labels.begin(), x.labels.end(), label) - x.labels.begin());
    }
    Attributes attributes;
    attributes.set("perm", perm);
    return {emit("Transpose", {x.value}, order, std::move(attributes)), order};
  }

  // `x` reshaped to `shape` (itself when it has that shape already).
  ValueId reshape_value(ValueId x, const Shape& shape) {
    if (graph_.type(x).shape == shape) return x;
    return emit_reshape(x, shape);
  }

  // The product of `a` and `b` summed over their common indices that
  // `needed` does not contain.
  Operand contract(Operand a, Operand b, const Labels& needed) {
    Labels a_keep = needed, b_keep = needed;
    a_keep.insert(a_keep.end(), b.labels.begin(), b.labels.end());
    b_keep.insert(b_keep.end(), a.labels.begin(), a.labels.end());
    a = reduce_to(a, a_keep);
    b = reduce_to(b, b_keep);
    Labels batch, summed, a_free, b_free;
    for (Label label : a.labels) {
      if (!contains(b.labels, label)) {
        a_free.push_back(label);
      } else if (contains(needed, label)) {
        batch.push_back(label);
      } else {
        summed.push_back(label);
      }
    }
    for (Label label : b.labels) {
      if (!contains(a.labels, label)) b_free.push_back(label);
    }
    a = transpose_to(a, concat({batch, a_free, summed}));
    b = transpose_to(b, concat({batch, summed, b_free}));
    Shape batch_shape = shape_of(batch);
    const std::int64_t m = shape_numel(shape_of(a_free));
    const std::int64_t k = shape_numel(shape_of(summed));
    const std::int64_t n = shape_numel(shape_of(b_free));
    Shape a_shape = batch_shape, b_shape = batch_shape, product_shape = batch_shape;
    a_shape.insert(a_shape.end(), {m, k});
    b_shape.insert(b_shape.end(), {k, n});
    product_shape.insert(product_shape.end(), {m, n});
    const ValueId product =
        emit_shaped("MatMul", {reshape_value(a.value, a_shape), reshape_value(b.value, b_shape)},
                    product_shape, {});
    const Labels labels = concat({batch, a_free, b_free});
    return {reshape_value(product, shape_of(labels)), labels};
  }

  // The last value of the lowering: `x` itself when no node was emitted, so
  // a node copying it is emitted to write the Einsum's output.
  ValueId finish(const Operand& x) {
    if (emitted_ > 0) return x.value;
    // A copy: emitting adds values, which moves the graph's value storage.
    const Shape shape = graph_.type(x.value).shape;
    return emit_reshape(x.value, shape);
  }

 private:
  static Labels concat(std::initializer_list<Labels> parts) {
    Labels all;
    for (const Labels& part : parts) all.insert(all.end(), part.begin(), part.end());
    return all;
  }

  static std::string label_name(Label label) {
    if (label >= kEllipsis)
      return fmt::format("of \"...\" (dimension {} from the right)", label - kEllipsis + 1);
    return fmt::format("'{}'", static_cast<char>(label));
  }

  Shape shape_of(const Labels& labels) const {
    Shape shape;
    for (Label label : labels) shape.push_back(size(label));
    return shape;
  }

  ValueId constant(const char* what, const std::vector<std::int64_t>& values) {
    return graph_.add_constant(
        unused_value_name(graph_, fmt::format("{}/{}", name_, what)),
        Tensor::from_vector(values, {static_cast<std::int64_t>(values.size())}));
  }

  ValueId emit_reshape(ValueId x, const Shape& shape) {
    const ValueId target = constant("shape", std::vector<std::int64_t>(shape.begin(), shape.end()));
    return emit_shaped("Reshape", {x, target}, shape, {});
  }

  ValueId emit(const char* op, std::vector<ValueId> inputs, const Labels& labels,
               Attributes attributes) {
    return emit_shaped(op, std::move(inputs), shape_of(labels), std::move(attributes));
  }

  ValueId emit_shaped(const char* op, std::vector<ValueId> inputs, const Shape& shape,
                      Attributes attributes) {
    const std::string base = fmt::format("{}/{}_{}", name_, op, emitted_++);
    const ValueId out =
        graph_.add_value(unused_value_name(graph_, base + "_output"), TensorType{dtype_, shape});
    graph_.add_node(op, std::move(inputs), {out}, std::move(attributes), base);
    return out;
  }

  Graph& graph_;
  std::string name_;
  DType dtype_;
  std::map<Label, std::int64_t> sizes_;
  int emitted_ = 0;
};

bool lowerable(const Graph& graph, const Node& node) {
  if (!is_onnx_op(node, "Einsum") || node.outputs.size() != 1 || node.inputs.empty()) {
    return false;
  }
  // An empty operand stays an Einsum (a Reshape reads a 0 in its target as
  // "the input's size"), which no backend runs.
  return std::all_of(node.inputs.begin(), node.inputs.end(), [&](ValueId input) {
    return input != kNoValue && is_static(graph.type(input)) && graph.type(input).numel() > 0;
  });
}

// Lowers `einsum` (a copy: emitting nodes moves the graph's node storage)
// and returns the value holding its result.
ValueId lower(Graph& graph, const Node& einsum) {
  if (!einsum.attributes.has("equation")) {
    throw Error("Einsum without an equation", {.node = einsum.name});
  }
  std::vector<int> ranks;
  for (ValueId input : einsum.inputs) ranks.push_back(graph.type(input).rank());
  Equation equation;
  try {
    equation = parse_equation(einsum.attributes.get_string("equation"), ranks);
  } catch (const Error& error) {
    throw Error(
        fmt::format("Einsum equation {}: {}",
                    quote_untrusted(einsum.attributes.get_string("equation")), error.message()),
        {.node = einsum.name});
  }
  Lowering lowering(graph, einsum);
  std::vector<Operand> operands;
  for (std::size_t k = 0; k < einsum.inputs.size(); ++k) {
    const Shape& shape = graph.type(einsum.inputs[k]).shape;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      lowering.record_size(equation.inputs[k][d], shape[d], einsum.name);
    }
    operands.push_back({einsum.inputs[k], equation.inputs[k]});
  }
  Operand result = lowering.squeeze_broadcast(operands[0]);
  for (std::size_t k = 1; k < operands.size(); ++k) {
    Labels needed = equation.output;
    for (std::size_t later = k + 1; later < operands.size(); ++later) {
      needed.insert(needed.end(), operands[later].labels.begin(), operands[later].labels.end());
    }
    result = lowering.contract(result, lowering.squeeze_broadcast(operands[k]), needed);
  }
  // Every output index is still there: a dimension is squeezed away only
  // where another operand has it larger, and that operand keeps it.
  result = lowering.reduce_to(result, equation.output);
  result = lowering.transpose_to(result, equation.output);
  return lowering.finish(result);
}

}  // namespace

int lower_einsums(Graph& graph) {
  std::vector<NodeId> lowered;
  const std::size_t count = graph.num_nodes();
  for (std::size_t n = 0; n < count; ++n) {
    if (!lowerable(graph, graph.node(static_cast<NodeId>(n)))) continue;
    const Node einsum = graph.node(static_cast<NodeId>(n));
    const ValueId result = lower(graph, einsum);
    // The last node emitted writes the Einsum's output value itself, so the
    // value keeps its name and its readers; its own output is left unread.
    Node& last = graph.node(graph.value(result).producer);
    last.outputs[0] = einsum.outputs[0];
    graph.value(einsum.outputs[0]).type = graph.type(result);
    lowered.push_back(static_cast<NodeId>(n));
  }
  if (lowered.empty()) return 0;
  graph.erase_nodes(lowered);
  graph.sort_topologically();
  graph.prune();
  return static_cast<int>(lowered.size());
}

}  // namespace collage
