// Binary: elementwise Add/Sub/Mul/Div/Max/Min with numpy broadcasting.
//
// oneDNN's binary primitive broadcasts its second source only, so a node is
// supported when one input already has the output's shape (for commutative
// ops either one; the inputs are swapped as needed). The same decoding feeds
// the support predicate, the binary primitive and binary post-ops.
#pragma once

#include <dnnl.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "collage/backends/onednn/post_ops.h"
#include "collage/backends/onednn/program.h"
#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::onednn {

struct BinarySpec {
  dnnl::algorithm algorithm = dnnl::algorithm::binary_add;
  // src0 has the output's shape; src1 broadcasts to it.
  ValueId src0 = kNoValue;
  ValueId src1 = kNoValue;
  ValueId output = kNoValue;
};

Result<BinarySpec> binary_spec(const Graph& graph, const Node& node);

// The oneDNN algorithm of a binary op type, if it has one.
std::optional<dnnl::algorithm> binary_algorithm(std::string_view op_type);
bool is_commutative(std::string_view op_type);

// The binary op types, for describe_support().
std::vector<std::string> binary_ops();

// The layout of a broadcast second operand of `type` beside a first operand
// in `layout0`: plain, unless oneDNN then falls back to its reference kernel
// and has a vectorized one with the operand in the first source's layout
// family. A 4-D first operand in a channels-last or blocked layout beside a
// plain [1, C, 1, 1] or [1, 1, 1, 1] operand runs the reference kernel, 100
// times slower (on AVX2, a squeeze-excitation scale of 1x88x3x96 took 1.6 ms,
// a scalar multiply of 1x64x24x160 20 ms); with the operand described in
// nChw8c it is vectorized (a per-channel or scalar operand is then a padded
// copy of a few floats).
memory::desc broadcast_operand_desc(const dnnl::engine& engine, dnnl::algorithm alg,
                                    const memory::desc& layout0, const memory::dims& src1_dims,
                                    memory::data_type type = memory::data_type::f32);

// Adds the binary primitive with as many groups of `chain` fused as oneDNN
// runs well; returns how many. The last fused group's value (or
// spec.output, if none) holds the result; the caller runs the rest.
std::size_t emit_binary(ProgramBuilder& builder, const BinarySpec& spec, const PostOpChain& chain);

}  // namespace collage::onednn
