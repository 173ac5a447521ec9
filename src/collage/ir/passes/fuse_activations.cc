#include "collage/ir/passes/fuse_activations.h"

#include <cmath>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "collage/ir/passes/rewrite_util.h"

namespace collage {
namespace {

constexpr double kTolerance = 1e-4;
constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kGeluCubic = 0.044715;
// Enough for every form above; bounds the work on long Mul chains.
constexpr std::size_t kMaxFactors = 4;

bool near(double value, double expected) {
  return std::abs(value - expected) <= kTolerance * std::max(1.0, std::abs(expected));
}

bool near(const std::optional<double>& value, double expected) {
  return value && near(*value, expected);
}

bool is_float32(const Graph& graph, ValueId value) {
  return graph.type(value).dtype == DType::kFloat32;
}

// For a two-input node with one scalar-constant input: the other input and
// the constant.
std::optional<std::pair<ValueId, double>> with_scalar(const Graph& graph, const Node* node) {
  if (node == nullptr || node->inputs.size() != 2) return std::nullopt;
  if (auto c = scalar_constant(graph, node->inputs[1])) return std::pair{node->inputs[0], *c};
  if (auto c = scalar_constant(graph, node->inputs[0])) return std::pair{node->inputs[1], *c};
  return std::nullopt;
}

// A product: the non-constant factors multiplied together, times a number.
struct Product {
  std::vector<ValueId> factors;
  double constant = 1.0;
};

bool is_product_node(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 2 || node.outputs.size() != 1) return false;
  if (is_onnx_op(node, "Mul")) return true;
  return is_onnx_op(node, "Div") && scalar_constant(graph, node.inputs[1]).has_value();
}

// Flattens the tree of Mul nodes (and Divs by a scalar constant) rooted at
// `root`, descending into operands that such nodes make for nobody else.
std::optional<Product> flatten_product(const Graph& graph, const ValueUsers& users,
                                       const Node& root) {
  if (!is_product_node(graph, root)) return std::nullopt;
  Product product;
  std::vector<const Node*> pending = {&root};
  while (!pending.empty()) {
    const Node* node = pending.back();
    pending.pop_back();
    const bool divides = node->op_type == "Div";
    for (std::size_t i = 0; i < 2; ++i) {
      const ValueId operand = node->inputs[i];
      if (std::optional<double> c = scalar_constant(graph, operand)) {
        if (divides && i == 1) {
          if (*c == 0.0) return std::nullopt;
          product.constant /= *c;
        } else {
          product.constant *= *c;
        }
        continue;
      }
      const Node* producer = producer_of(graph, operand);
      if (producer != nullptr && is_product_node(graph, *producer) &&
          users.only_by_one_node(operand)) {
        pending.push_back(producer);
        continue;
      }
      product.factors.push_back(operand);
      if (product.factors.size() > kMaxFactors) return std::nullopt;
    }
  }
  return product;
}

// The two factors of a two-factor product, in both orders.
std::vector<std::pair<ValueId, ValueId>> orderings(const Product& product) {
  if (product.factors.size() != 2) return {};
  return {{product.factors[0], product.factors[1]}, {product.factors[1], product.factors[0]}};
}

// `value` = 1 + f: returns f.
std::optional<ValueId> one_plus(const Graph& graph, ValueId value) {
  auto add = with_scalar(graph, made_by(graph, value, "Add"));
  if (!add || !near(add->second, 1.0)) return std::nullopt;
  return add->first;
}

// erf(x / sqrt(2)), or erf(x * (1 / sqrt(2))).
bool is_erf_of_scaled(const Graph& graph, ValueId value, ValueId x) {
  const Node* erf = made_by(graph, value, "Erf");
  if (erf == nullptr || erf->inputs.size() != 1) return false;
  const ValueId t = erf->inputs[0];
  if (auto div = with_scalar(graph, made_by(graph, t, "Div"))) {
    return div->first == x && graph.node(graph.value(t).producer).inputs[0] == x &&
           near(div->second, kSqrt2);
  }
  auto mul = with_scalar(graph, made_by(graph, t, "Mul"));
  return mul && mul->first == x && near(mul->second, 1.0 / kSqrt2);
}

// x^3, as Pow(x, 3) or as a product of three x.
bool is_cube(const Graph& graph, const ValueUsers& users, ValueId value, ValueId x) {
  if (const Node* pow = made_by(graph, value, "Pow")) {
    return pow->inputs.size() == 2 && pow->inputs[0] == x &&
           near(scalar_constant(graph, pow->inputs[1]), 3.0);
  }
  const Node* mul = made_by(graph, value, "Mul");
  if (mul == nullptr) return false;
  std::optional<Product> product = flatten_product(graph, users, *mul);
  if (!product || !near(product->constant, 1.0) || product->factors.size() != 3) return false;
  for (ValueId factor : product->factors) {
    if (factor != x) return false;
  }
  return true;
}

// tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)).
bool is_gelu_tanh_core(const Graph& graph, const ValueUsers& users, ValueId value, ValueId x) {
  const Node* tanh = made_by(graph, value, "Tanh");
  if (tanh == nullptr || tanh->inputs.size() != 1) return false;
  const Node* scale = made_by(graph, tanh->inputs[0], "Mul");
  if (scale == nullptr) return false;
  std::optional<Product> scaled = flatten_product(graph, users, *scale);
  if (!scaled || scaled->factors.size() != 1 || !near(scaled->constant, kSqrt2OverPi)) {
    return false;
  }
  const Node* sum = made_by(graph, scaled->factors[0], "Add");
  if (sum == nullptr || sum->inputs.size() != 2) return false;
  for (std::size_t i = 0; i < 2; ++i) {
    if (sum->inputs[i] != x) continue;
    const Node* cubic = made_by(graph, sum->inputs[1 - i], "Mul");
    if (cubic == nullptr) continue;
    std::optional<Product> term = flatten_product(graph, users, *cubic);
    if (!term || !near(term->constant, kGeluCubic)) continue;
    if (term->factors.size() == 1 && is_cube(graph, users, term->factors[0], x)) return true;
    if (term->factors.size() == 3 && term->factors[0] == x && term->factors[1] == x &&
        term->factors[2] == x) {
      return true;
    }
  }
  return false;
}

// clip(x + b, 0, m): returns x, b and m.
struct ClipOfShift {
  ValueId x = kNoValue;
  double shift = 0;
  double max = 0;
};

std::optional<ClipOfShift> clip_of_shift(const Graph& graph, ValueId value) {
  const Node* clip = made_by(graph, value, "Clip");
  if (clip == nullptr || clip->inputs.empty()) return std::nullopt;
  double low = clip->attributes.get_float("min", -std::numeric_limits<float>::infinity());
  double high = clip->attributes.get_float("max", std::numeric_limits<float>::infinity());
  if (clip->input(1) != kNoValue) {
    std::optional<double> c = scalar_constant(graph, clip->input(1));
    if (!c) return std::nullopt;
    low = *c;
  }
  if (clip->input(2) != kNoValue) {
    std::optional<double> c = scalar_constant(graph, clip->input(2));
    if (!c) return std::nullopt;
    high = *c;
  }
  if (low != 0.0 || !std::isfinite(high) || high <= 0.0) return std::nullopt;
  auto add = with_scalar(graph, made_by(graph, clip->inputs[0], "Add"));
  if (!add) return std::nullopt;
  return ClipOfShift{add->first, add->second, high};
}

// Rewrites `root` in place into `op_type`(x); the chain it replaced is left
// for prune() to drop.
void become(Graph& graph, NodeId root, const char* op_type, ValueId x, Attributes attributes) {
  Node& node = graph.node(root);
  node.op_type = op_type;
  node.domain.clear();
  node.inputs = {x};
  node.attributes = std::move(attributes);
}

// Runs `rewrite` on every float32 single-output node of the default domain;
// prunes if it rewrote any.
template <typename Rewrite>
int rewrite_nodes(Graph& graph, Rewrite rewrite) {
  int count = 0;
  {
    const ValueUsers users(graph);
    for (std::size_t n = 0; n < graph.num_nodes(); ++n) {
      const auto id = static_cast<NodeId>(n);
      const Node& node = graph.node(id);
      if (node.outputs.size() != 1 || !is_float32(graph, node.outputs[0])) continue;
      if (rewrite(users, id)) ++count;
    }
  }
  if (count > 0) graph.prune();
  return count;
}

// The output of `root` has the type of `x` (no broadcast widened it).
bool keeps_type(const Graph& graph, NodeId root, ValueId x) {
  return graph.type(graph.node(root).outputs[0]) == graph.type(x);
}

}  // namespace

int fuse_gelu(Graph& graph) {
  return rewrite_nodes(graph, [&](const ValueUsers& users, NodeId root) {
    std::optional<Product> product = flatten_product(graph, users, graph.node(root));
    if (!product || !near(product->constant, 0.5)) return false;
    for (auto [x, other] : orderings(*product)) {
      std::optional<ValueId> core = one_plus(graph, other);
      if (!core || !keeps_type(graph, root, x)) continue;
      Attributes attributes;
      if (is_erf_of_scaled(graph, *core, x)) {
        attributes.set("approximate", std::string("none"));
      } else if (is_gelu_tanh_core(graph, users, *core, x)) {
        attributes.set("approximate", std::string("tanh"));
      } else {
        continue;
      }
      become(graph, root, "Gelu", x, std::move(attributes));
      return true;
    }
    return false;
  });
}

int fuse_swish(Graph& graph) {
  return rewrite_nodes(graph, [&](const ValueUsers& users, NodeId root) {
    std::optional<Product> product = flatten_product(graph, users, graph.node(root));
    if (!product || !near(product->constant, 1.0)) return false;
    for (auto [x, other] : orderings(*product)) {
      const Node* sigmoid = made_by(graph, other, "Sigmoid");
      if (sigmoid == nullptr || sigmoid->inputs.size() != 1 || !keeps_type(graph, root, x)) {
        continue;
      }
      double alpha = 1.0;
      if (sigmoid->inputs[0] != x) {
        const Node* scale = made_by(graph, sigmoid->inputs[0], "Mul");
        std::optional<Product> scaled =
            scale == nullptr ? std::nullopt : flatten_product(graph, users, *scale);
        if (!scaled || scaled->factors.size() != 1 || scaled->factors[0] != x) continue;
        alpha = scaled->constant;
      }
      Attributes attributes;
      attributes.set("alpha", static_cast<float>(alpha));
      become(graph, root, "Swish", x, std::move(attributes));
      return true;
    }
    return false;
  });
}

int fuse_hard_sigmoid(Graph& graph) {
  return rewrite_nodes(graph, [&](const ValueUsers& users, NodeId root) {
    std::optional<Product> product = flatten_product(graph, users, graph.node(root));
    if (!product || product->factors.size() != 1) return false;
    std::optional<ClipOfShift> clip = clip_of_shift(graph, product->factors[0]);
    if (!clip || !near(product->constant, 1.0 / clip->max)) return false;
    if (!keeps_type(graph, root, clip->x)) return false;
    Attributes attributes;
    attributes.set("alpha", static_cast<float>(1.0 / clip->max));
    attributes.set("beta", static_cast<float>(clip->shift / clip->max));
    become(graph, root, "HardSigmoid", clip->x, std::move(attributes));
    return true;
  });
}

int fuse_hard_swish(Graph& graph) {
  return rewrite_nodes(graph, [&](const ValueUsers& users, NodeId root) {
    std::optional<Product> product = flatten_product(graph, users, graph.node(root));
    if (!product) return false;
    for (auto [x, other] : orderings(*product)) {
      if (!keeps_type(graph, root, x)) continue;
      bool matches = false;
      if (const Node* hard = made_by(graph, other, "HardSigmoid")) {
        matches = near(product->constant, 1.0) && hard->inputs.size() == 1 &&
                  hard->inputs[0] == x &&
                  near(hard->attributes.get_float("alpha", 0.2f), 1 / 6.0) &&
                  near(hard->attributes.get_float("beta", 0.5f), 0.5);
      } else if (std::optional<ClipOfShift> clip = clip_of_shift(graph, other)) {
        matches = clip->x == x && near(clip->shift, 3.0) && near(clip->max, 6.0) &&
                  near(product->constant, 1 / 6.0);
      }
      if (!matches) continue;
      become(graph, root, "HardSwish", x, {});
      return true;
    }
    return false;
  });
}

}  // namespace collage
