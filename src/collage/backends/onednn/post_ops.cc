#include "collage/backends/onednn/post_ops.h"

#include <string_view>

#include "collage/backends/onednn/lowering_error.h"

namespace collage::onednn {

namespace {

// The dims a binary operand of `shape` is read with beside a destination
// of `dst_dims`: rank-aligned to them, or, when the destination is a
// product whose rows were collapsed into one dimension (a matmul over a
// batch, collapse_batch in matmul.cc), with its leading dimensions
// collapsed the same way; it must then broadcast over all rows or none.
memory::dims operand_dims(const Shape& shape, const memory::dims& dst_dims) {
  const int rank = static_cast<int>(dst_dims.size());
  memory::dims dims = to_dims(shape);
  if (static_cast<int>(dims.size()) <= rank) return align_rank(dims, rank);
  const auto leading = static_cast<std::ptrdiff_t>(dims.size()) - rank + 1;
  const memory::dim collapsed = dims_numel(memory::dims(dims.begin(), dims.begin() + leading));
  dims.erase(dims.begin(), dims.begin() + leading);
  dims.insert(dims.begin(), collapsed);
  if (collapsed != 1 && collapsed != dst_dims[0]) {
    throw LoweringError("binary post-op operand has a higher rank than the result");
  }
  return dims;
}

}  // namespace

PostOpAttr::PostOpAttr(ProgramBuilder& builder, const std::vector<PostOp>& ops,
                       const memory::dims& dst_dims,
                       const std::optional<memory::desc>& full_layout) {
  dnnl::post_ops list;
  int index = 0;
  for (const PostOp& op : ops) {
    switch (op.kind) {
      case PostOp::Kind::kEltwise:
        list.append_eltwise(1.f, op.eltwise.algorithm, op.eltwise.alpha, op.eltwise.beta);
        break;
      case PostOp::Kind::kSum:
        if (sum_operand_ != kNoValue) throw LoweringError("two sum post-ops on one primitive");
        list.append_sum(op.scale);
        sum_operand_ = op.operand;
        break;
      case PostOp::Kind::kBinary: {
        const memory::dims dims = operand_dims(builder.shape(op.operand), dst_dims);
        const memory::desc layout =
            dims == dst_dims && full_layout ? *full_layout : plain_desc(dims);
        list.append_binary(op.algorithm, layout);
        binary_operands_.push_back(Operand{index, op.operand, layout});
        break;
      }
    }
    ++index;
  }
  attr_.set_post_ops(list);
}

memory PostOpAttr::destination(ProgramBuilder& builder, ValueId output, const memory::desc& desc,
                               const PostOpChain& chain, std::size_t fused) {
  if (sum_operand_ != kNoValue) {
    const std::vector<ValueId> post_op_values(
        chain.outputs.begin(), chain.outputs.begin() + static_cast<std::ptrdiff_t>(fused));
    if (std::optional<memory> reused =
            builder.buffer_to_overwrite(sum_operand_, output, desc, post_op_values)) {
      sum_in_place_ = true;
      return *reused;
    }
  }
  return builder.output_memory(output, desc);
}

void PostOpAttr::bind(ProgramBuilder& builder, std::unordered_map<int, memory>& args,
                      const memory& dst) const {
  for (const Operand& operand : binary_operands_) {
    args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(operand.index) | DNNL_ARG_SRC_1] =
        builder.read(operand.value, operand.layout);
  }
  if (sum_operand_ != kNoValue && !sum_in_place_) builder.copy_into(sum_operand_, dst);
}

std::vector<PostOp> PostOpChain::prefix(const std::vector<PostOp>& fixed, std::size_t count) const {
  std::vector<PostOp> ops = fixed;
  for (std::size_t i = 0; i < count; ++i) ops.insert(ops.end(), groups[i].begin(), groups[i].end());
  return ops;
}

bool repeats_an_eltwise_algorithm(const std::vector<PostOp>& ops) {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind != PostOp::Kind::kEltwise) continue;
    for (std::size_t j = i + 1; j < ops.size(); ++j) {
      if (ops[j].kind != PostOp::Kind::kEltwise) continue;
      const EltwiseStep& a = ops[i].eltwise;
      const EltwiseStep& b = ops[j].eltwise;
      if (a.algorithm == b.algorithm && (a.alpha != b.alpha || a.beta != b.beta)) return true;
    }
  }
  return false;
}

bool is_reference_impl(const dnnl::primitive_desc_base& pd) {
  return std::string_view(pd.impl_info_str()).starts_with("ref");
}

}  // namespace collage::onednn
