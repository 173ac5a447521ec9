// NodeChecks: small predicates every op family's support check shares.
//
// oneDNN here computes in float32 only and handles up to DNNL_MAX_NDIMS
// dimensions; these checks say so once, with a reason a report can show.
#pragma once

#include <dnnl.hpp>
#include <optional>
#include <string>

#include "collage/ir/graph.h"

namespace collage::onednn {

// Whether `node` is an op of the default ONNX domain ("" or "ai.onnx"):
// custom-domain ops may share a name without sharing semantics.
bool in_onnx_domain(const Node& node);

// The op type as the op table names it: "Conv" in the ONNX domain, the
// domain first otherwise ("com.microsoft.QGemm").
std::string qualified_op_type(const Node& node);

// The constant behind input `i` of `node`, or null when it is absent or
// computed at run time (the quantized ops' scales, zero points and weights).
const Tensor* constant_input(const Graph& graph, const Node& node, std::size_t i);

// The value of the one-element constant behind input `i` of `node`, or
// nullopt (a quantized op's scale or zero point).
std::optional<double> scalar_input(const Graph& graph, const Node& node, std::size_t i);

// The zero point behind input `i` of a quantized op: the one-element
// constant's value, 0 when the input is absent (ONNX's default), or nullopt
// when it is computed at run time.
std::optional<double> zero_point_input(const Graph& graph, const Node& node, std::size_t i);

// oneDNN's data type for int8 or uint8 values; nullopt for other types.
std::optional<dnnl::memory::data_type> eight_bit_type(DType dtype);

// Why `node` cannot run on oneDNN on account of its tensors (a non-float32
// input or output, an empty tensor, too many dimensions), or nullopt if its
// tensors are fine. `max_inputs` present inputs at most are checked; later
// inputs are rejected when present.
std::optional<std::string> tensor_problem(const Graph& graph, const Node& node,
                                          std::size_t max_inputs);

// A float32 constant with exactly one element, or nullopt.
std::optional<float> scalar_constant(const Graph& graph, ValueId value);

// Whether `value` is a float32 scalar constant within 1e-4 (relative) of `expected`.
bool is_scalar_near(const Graph& graph, ValueId value, double expected);

}  // namespace collage::onednn
