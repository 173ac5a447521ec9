// Eltwise: ONNX activations as oneDNN eltwise algorithms.
//
// One table maps an activation node (Relu, Clip, HardSigmoid, ...) to the
// oneDNN eltwise steps that compute it. The same steps serve three uses: a
// standalone eltwise primitive, a post-op fused into a convolution or matmul,
// and the support predicate, so the three can never disagree.
#pragma once

#include <dnnl.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "collage/backends/onednn/program.h"
#include "collage/ir/graph.h"
#include "collage/ir/result.h"

namespace collage::onednn {

// d = algorithm(s; alpha, beta), in oneDNN's eltwise notation.
struct EltwiseStep {
  dnnl::algorithm algorithm = dnnl::algorithm::eltwise_relu;
  float alpha = 0.f;
  float beta = 0.f;
};

// The eltwise steps `node` computes, applied in order (most ops are one
// step; HardSigmoid is a linear step then a clip), or why oneDNN cannot run it.
Result<std::vector<EltwiseStep>> eltwise_steps(const Graph& graph, const Node& node);

// The erf-based GELU, x * 0.5 * (1 + erf(x / sqrt(2))).
std::vector<EltwiseStep> gelu_erf_steps();

// Whether `op_type` is an activation this table knows (a given node may
// still be rejected for its attributes or types).
bool is_activation(std::string_view op_type);

// The activation op types, for describe_support().
std::vector<std::string> activation_ops();

// Adds eltwise primitives computing `output` from `input`, in the layout
// `input` already has (eltwise works on blocked layouts as well).
void emit_eltwise(ProgramBuilder& builder, ValueId input, ValueId output,
                  const std::vector<EltwiseStep>& steps);

}  // namespace collage::onednn
