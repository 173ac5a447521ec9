// PostOps: work oneDNN applies to a primitive's result before storing it.
//
// Fusing an activation, a bias-like broadcast or a residual add into a
// convolution or matmul saves a pass over memory; that is most of what a
// library backend gains over running ops one by one. A PostOp names a value
// to read (binary operand, sum accumulator) rather than a memory, so the
// fusion decision is made before layouts are fixed. PostOpAttr turns a list
// of them into a primitive attribute and, once the primitive's destination
// exists, binds the operand memories.
#pragma once

#include <dnnl.hpp>
#include <optional>
#include <unordered_map>
#include <vector>

#include "collage/backends/onednn/eltwise.h"
#include "collage/backends/onednn/program.h"

namespace collage::onednn {

struct PostOp {
  enum class Kind { kEltwise, kBinary, kSum };

  static PostOp eltwise_op(const EltwiseStep& step) { return {Kind::kEltwise, step}; }
  // dst = dst <algorithm> operand, operand broadcast to dst.
  static PostOp binary_op(dnnl::algorithm algorithm, ValueId operand) {
    return {Kind::kBinary, {}, algorithm, operand};
  }
  // dst = dst + scale * operand, operand of dst's shape: oneDNN accumulates
  // into the destination, which is filled with the operand first.
  static PostOp sum_op(ValueId operand, float scale) {
    return {Kind::kSum, {}, dnnl::algorithm::binary_add, operand, scale};
  }

  Kind kind = Kind::kEltwise;
  EltwiseStep eltwise;
  dnnl::algorithm algorithm = dnnl::algorithm::binary_add;
  ValueId operand = kNoValue;
  float scale = 1.f;
};

struct PostOpChain;  // below

class PostOpAttr {
 public:
  // `dst_dims` are the dims of the primitive's destination; binary operands
  // are rank-aligned to them. An operand with exactly those dims is read in
  // `full_layout` when given (the destination's own layout, if known in
  // advance), else in the plain layout.
  PostOpAttr(ProgramBuilder& builder, const std::vector<PostOp>& ops, const memory::dims& dst_dims,
             const std::optional<memory::desc>& full_layout = std::nullopt);

  const dnnl::primitive_attr& attr() const { return attr_; }

  // The memory the primitive writes `output` (in layout `desc`) into: a sum
  // operand's own buffer where nothing else reads it from this step on
  // (ProgramBuilder::buffer_to_overwrite, given the values of the first
  // `fused` groups of `chain`, the post-ops the primitive takes), so the sum
  // accumulates in place instead of after a copy, else a buffer of
  // builder.output_memory.
  memory destination(ProgramBuilder& builder, ValueId output, const memory::desc& desc,
                     const PostOpChain& chain, std::size_t fused);

  // Adds the operand memories to `args`, and the copy of a sum operand into
  // `dst` unless destination() handed out its buffer; call right before
  // adding the primitive's step.
  void bind(ProgramBuilder& builder, std::unordered_map<int, memory>& args,
            const memory& dst) const;

 private:
  struct Operand {
    int index;
    ValueId value;
    memory::desc layout;
  };

  dnnl::primitive_attr attr_;
  std::vector<Operand> binary_operands_;
  ValueId sum_operand_ = kNoValue;
  bool sum_in_place_ = false;
};

// The post-ops offered to one primitive: a group per fused unit, in order,
// with the value each group's unit defines. A primitive may take a prefix
// of the groups; the rest then run as separate primitives.
struct PostOpChain {
  std::vector<std::vector<PostOp>> groups;
  std::vector<ValueId> outputs;

  std::size_t size() const { return groups.size(); }
  // The first `count` groups as one list, after `fixed`.
  std::vector<PostOp> prefix(const std::vector<PostOp>& fixed, std::size_t count) const;
};

// Whether `pd` is one of oneDNN's reference (unoptimized, loop-nest)
// implementations.
bool is_reference_impl(const dnnl::primitive_desc_base& pd);

// Whether `ops` hold two eltwise post-ops of one algorithm with different
// parameters. This oneDNN's generated kernels apply the first one's
// parameters to both (a convolution with linear 2x+1 then linear 10x
// computes 2(2x+1)+1), so such a list is never built.
bool repeats_an_eltwise_algorithm(const std::vector<PostOp>& ops);

// A primitive descriptor built with post-ops, and how many groups of the
// chain it took.
template <typename Pd>
struct FusedPd {
  Pd pd;
  PostOpAttr post_ops;
  std::size_t fused = 0;
};

// Builds a primitive descriptor through `build` (primitive_attr -> Pd) with
// the `fixed` post-ops (part of the op itself, like Gemm's alpha) and the
// longest prefix of `chain` oneDNN has an optimized implementation for. A
// prefix that only a reference implementation takes is not worth it when the
// primitive alone is optimized: then the rest runs as separate primitives.
// Throws dnnl::error when even the primitive with `fixed` alone is rejected.
template <typename Pd, typename Build>
FusedPd<Pd> create_fused(ProgramBuilder& builder, const Build& build,
                         const std::vector<PostOp>& fixed, const PostOpChain& chain,
                         const memory::dims& dst_dims,
                         const std::optional<memory::desc>& full_layout = std::nullopt) {
  PostOpAttr plain(builder, fixed, dst_dims, full_layout);
  Pd plain_pd = build(plain.attr());
  const bool plain_is_reference = is_reference_impl(plain_pd);
  for (std::size_t count = chain.size(); count > 0; --count) {
    const std::vector<PostOp> ops = chain.prefix(fixed, count);
    if (repeats_an_eltwise_algorithm(ops)) continue;
    PostOpAttr attr(builder, ops, dst_dims, full_layout);
    try {
      Pd pd = build(attr.attr());
      if (!is_reference_impl(pd) || plain_is_reference) return {pd, attr, count};
    } catch (const dnnl::error&) {
      // oneDNN rejects this combination: try a shorter one.
    }
  }
  return {plain_pd, plain, 0};
}

}  // namespace collage::onednn
