// OpSupport: which single nodes the oneDNN backend runs, and why not.
//
// Each op family decodes its node into the spec its builder consumes; a node
// is supported exactly when that decoding succeeds. The predicate and the
// compiler therefore share one source of truth.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collage/ir/graph.h"

namespace collage::onednn {

// nullopt when oneDNN can run `node` on its own; else the reason.
std::optional<std::string> why_unsupported(const Graph& graph, const Node& node);

// Whether oneDNN's int8 products are exact on this CPU: with VNNI. Without
// it (AVX2, AVX-512 before Cascade Lake) oneDNN multiplies u8 by s8 in pairs
// summed into int16, which saturates: a QLinearConv, QLinearConvTranspose or
// QLinearMatMul then comes out tens of steps off, so the backend leaves them
// to native.
bool int8_products_exact();

// The op types the backend knows, for describe_support().
std::vector<std::string> supported_op_types();

}  // namespace collage::onednn
