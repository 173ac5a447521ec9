#include "collage/backends/onednn/fusion.h"

#include <unordered_map>

#include "collage/backends/onednn/binary.h"
#include "collage/backends/onednn/eltwise.h"
#include "collage/backends/onednn/layout.h"
#include "collage/backends/onednn/node_checks.h"

namespace collage::onednn {
namespace {

enum class AnchorKind { kNone, kConvolution, kMatMul, kBinary, kBatchNorm, kConcat };

AnchorKind anchor_kind(const Graph& graph, const Unit& unit) {
  if (unit.kind != Unit::Kind::kNode) return AnchorKind::kNone;
  const Node& node = graph.node(unit.node);
  if (!in_onnx_domain(node)) return AnchorKind::kNone;
  const std::string& op = node.op_type;
  if (op == "Conv" || op == "ConvTranspose") return AnchorKind::kConvolution;
  if (op == "MatMul" || op == "Gemm") return AnchorKind::kMatMul;
  if (op == "BatchNormalization") return AnchorKind::kBatchNorm;
  if (op == "Concat") return AnchorKind::kConcat;
  if (binary_spec(graph, node)) return AnchorKind::kBinary;
  return AnchorKind::kNone;
}

class Fuser {
 public:
  Fuser(const Graph& graph, const std::vector<Unit>& units) : graph_(graph), units_(units) {
    for (std::size_t i = 0; i < units.size(); ++i) {
      position_[units[i].node] = i;
      producer_[units[i].output] = i;
      for (ValueId input : units[i].inputs) readers_[input].push_back(i);
    }
  }

  std::vector<FusedOp> run() {
    std::vector<bool> taken(units_.size(), false);
    std::vector<FusedOp> ops;
    for (std::size_t i = 0; i < units_.size(); ++i) {
      if (taken[i]) continue;
      FusedOp op{units_[i], std::nullopt, kNoValue, {}};
      grow(op, taken);
      ops.push_back(std::move(op));
    }
    return ops;
  }

 private:
  // The one unit reading `value`, when nothing else (no other unit, no
  // partition output) needs the value itself.
  std::optional<std::size_t> sole_reader(ValueId value) const {
    auto it = readers_.find(value);
    if (it == readers_.end() || it->second.size() != 1 || graph_.is_output(value)) {
      return std::nullopt;
    }
    return it->second[0];
  }

  // Whether `value` exists before unit `anchor` runs: FusedOps are emitted
  // in the order of their anchors, so a unit before the anchor has run.
  bool ready_before(ValueId value, std::size_t anchor) const {
    if (graph_.value(value).producer == kNoNode) return true;
    auto it = producer_.find(value);
    return it != producer_.end() && it->second < anchor;
  }

  const memory::dims& dims_of(ValueId value) {
    auto it = dims_.find(value);
    if (it == dims_.end()) it = dims_.emplace(value, to_dims(graph_.type(value).shape)).first;
    return it->second;
  }

  void grow(FusedOp& op, std::vector<bool>& taken) {
    const AnchorKind kind = anchor_kind(graph_, op.anchor);
    if (kind == AnchorKind::kNone) return;
    const std::size_t anchor = position_.at(op.anchor.node);
    if (kind == AnchorKind::kConvolution || kind == AnchorKind::kMatMul) fold_bias(op, taken);
    bool have_sum = false;
    ValueId value = op.anchor_output();
    while (auto reader = sole_reader(value)) {
      const Unit& unit = units_[*reader];
      std::optional<std::vector<PostOp>> ops;
      if (kind == AnchorKind::kBatchNorm) {
        ops = batch_norm_relu(unit, op);
      } else if (kind == AnchorKind::kConcat) {
        ops = concat_batch_norm(unit, value, op);
      } else {
        ops = post_ops_for(unit, value, kind, anchor, have_sum);
      }
      if (!ops) break;
      for (const PostOp& p : *ops) have_sum |= p.kind == PostOp::Kind::kSum;
      op.post.push_back(FusedStep{unit, std::move(*ops)});
      taken[*reader] = true;
      value = unit.output;
    }
  }

  // Conv/MatMul followed by an Add of a constant that holds one value per
  // output channel (Conv) or column (MatMul) is the primitive's own bias.
  void fold_bias(FusedOp& op, std::vector<bool>& taken) {
    const Node& anchor = graph_.node(op.anchor.node);
    if (anchor.op_type == "Gemm" || anchor.input(2) != kNoValue) return;
    auto reader = sole_reader(op.anchor.output);
    if (!reader) return;
    const Unit& unit = units_[*reader];
    if (unit.kind != Unit::Kind::kNode) return;
    const Node& add = graph_.node(unit.node);
    const ValueId operand = other_input(add, "Add", op.anchor.output);
    if (operand == kNoValue || !graph_.value(operand).is_constant()) return;
    const memory::dims& out = dims_of(op.anchor.output);
    if (dims_of(add.outputs[0]) != out) return;
    const memory::dims aligned = align_rank(dims_of(operand), static_cast<int>(out.size()));
    if (aligned.size() != out.size()) return;
    const std::size_t channel = anchor.op_type == "MatMul" ? out.size() - 1 : 1;
    if (anchor.op_type == "MatMul" && !matmul_keeps_rank(anchor)) return;
    for (std::size_t i = 0; i < aligned.size(); ++i) {
      if (aligned[i] != (i == channel ? out[i] : 1)) return;
    }
    op.bias_add = unit;
    op.bias = operand;
    taken[*reader] = true;
  }

  bool matmul_keeps_rank(const Node& matmul) {
    return graph_.type(matmul.input(0)).rank() >= 2 && graph_.type(matmul.input(1)).rank() >= 2;
  }

  static ValueId other_input(const Node& node, const char* op_type, ValueId value) {
    if (node.op_type != op_type || node.inputs.size() != 2) return kNoValue;
    if (node.inputs[0] == value && node.inputs[1] != value) return node.inputs[1];
    if (node.inputs[1] == value && node.inputs[0] != value) return node.inputs[0];
    return kNoValue;
  }

  // Batch norm fuses a following Relu (by flag) and nothing else.
  std::optional<std::vector<PostOp>> batch_norm_relu(const Unit& unit, const FusedOp& op) const {
    if (!op.post.empty()) return std::nullopt;
    return relu(unit);
  }

  // A Concat takes the BatchNormalization that normalizes it, as no
  // post-op (each source is normalized on its way into the output,
  // emit_normalized_concat), and that one's Relu.
  std::optional<std::vector<PostOp>> concat_batch_norm(const Unit& unit, ValueId value,
                                                       const FusedOp& op) const {
    if (op.post.size() == 1) return relu(unit);
    if (!op.post.empty() || unit.kind != Unit::Kind::kNode) return std::nullopt;
    const Node& node = graph_.node(unit.node);
    if (node.op_type != "BatchNormalization" || node.input(0) != value) return std::nullopt;
    return std::vector<PostOp>{};
  }

  std::optional<std::vector<PostOp>> relu(const Unit& unit) const {
    if (unit.kind != Unit::Kind::kNode) return std::nullopt;
    const Node& node = graph_.node(unit.node);
    if (node.op_type != "Relu" || !eltwise_steps(graph_, node)) return std::nullopt;
    return std::vector<PostOp>{PostOp::eltwise_op({dnnl::algorithm::eltwise_relu, 0.f, 0.f})};
  }

  std::optional<std::vector<PostOp>> post_ops_for(const Unit& unit, ValueId value, AnchorKind kind,
                                                  std::size_t anchor, bool have_sum) {
    if (unit.kind == Unit::Kind::kGeluErf) {
      return std::vector<PostOp>{PostOp::eltwise_op(gelu_erf_steps()[0])};
    }
    const Node& node = graph_.node(unit.node);
    if (is_activation(node.op_type)) {
      Result<std::vector<EltwiseStep>> steps = eltwise_steps(graph_, node);
      if (!steps) return std::nullopt;
      std::vector<PostOp> ops;
      for (const EltwiseStep& step : steps.value()) ops.push_back(PostOp::eltwise_op(step));
      return ops;
    }
    // A binary op must be runnable on its own too: oneDNN may decline the
    // fused form, and then the chain is emitted unit by unit.
    Result<BinarySpec> spec = binary_spec(graph_, node);
    if (!spec) return std::nullopt;
    const bool first = node.inputs[0] == value;
    const ValueId operand = first ? node.inputs[1] : node.inputs[0];
    if (operand == value || !ready_before(operand, anchor)) return std::nullopt;
    const memory::dims& out = dims_of(node.outputs[0]);
    if (out != dims_of(value)) return std::nullopt;
    const bool full = align_rank(dims_of(operand), static_cast<int>(out.size())) == out;
    // A same-shape operand added to a convolution or matmul is accumulated
    // into the destination (the sum post-op; optimized kernels take it with
    // scale 1 only); for a binary anchor it is read in the destination's
    // layout anyway.
    const bool sum = full && !have_sum && kind != AnchorKind::kBinary;
    const std::string& op = node.op_type;
    if (op == "Add") {
      if (sum) return std::vector<PostOp>{PostOp::sum_op(operand, 1.f)};
      return std::vector<PostOp>{PostOp::binary_op(dnnl::algorithm::binary_add, operand)};
    }
    if (op == "Sub" && !first) {
      // operand - value = -(value - operand).
      return std::vector<PostOp>{PostOp::binary_op(dnnl::algorithm::binary_sub, operand),
                                 PostOp::eltwise_op({dnnl::algorithm::eltwise_linear, -1.f, 0.f})};
    }
    if (op == "Div" && !first) return std::nullopt;
    return std::vector<PostOp>{PostOp::binary_op(*binary_algorithm(op), operand)};
  }

  const Graph& graph_;
  const std::vector<Unit>& units_;
  std::unordered_map<NodeId, std::size_t> position_;
  std::unordered_map<ValueId, std::size_t> producer_;
  std::unordered_map<ValueId, std::vector<std::size_t>> readers_;
  std::unordered_map<ValueId, memory::dims> dims_;
};

}  // namespace

PostOpChain FusedOp::chain() const {
  PostOpChain result;
  for (const FusedStep& step : post) {
    result.groups.push_back(step.ops);
    result.outputs.push_back(step.unit.output);
  }
  return result;
}

std::vector<FusedOp> fuse_units(const Graph& graph, const std::vector<Unit>& units) {
  return Fuser(graph, units).run();
}

}  // namespace collage::onednn
