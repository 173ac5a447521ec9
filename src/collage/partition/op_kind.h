// OpKind: how an operator's outputs depend on its inputs, for fusion rules.
//
// Fusing compilers decide what may share a kernel from this classification
// alone (TVM's OpPatternKind, XLA's fusion kinds): an elementwise op can be
// fused into the epilogue of a convolution, injective ops chain freely, an
// opaque op stands alone. The kinds are ordered from the most to the least
// fusable, and the kind of a sub-graph is the largest kind inside it, so
// combiner rules can say "upstream at most X, downstream at most Y".
#pragma once

#include <cstdint>
#include <string_view>

namespace collage {

enum class OpKind : std::uint8_t {
  // Each output element depends on the input element at the same position.
  kElementwise,
  // Like elementwise after broadcasting the inputs to a common shape.
  kBroadcast,
  // Each output element reads one input element (reshape, transpose, concat).
  kInjective,
  // Reduces over one or more axes.
  kReduction,
  // A complex op (convolution, matrix product, pooling) whose outputs can
  // absorb following elementwise ops.
  kOutElementwiseFusable,
  // Anything else; never fused with a neighbour by kind rules.
  kOpaque,
};

// The kind of an ONNX op of the default domain; kOpaque for ops not in the table.
OpKind op_kind_of(std::string_view op_type);

// "elementwise", "broadcast", ...
std::string_view op_kind_name(OpKind kind);

}  // namespace collage
