#include "collage/partition/op_kind.h"

#include <algorithm>
#include <array>
#include <utility>

namespace collage {
namespace {

using Entry = std::pair<std::string_view, OpKind>;

// Sorted by op type for binary search (the static_assert below checks it).
// Classification follows what a fusing compiler can legally put in one loop
// nest over the output: BatchNormalization in inference is a per-channel
// scale and shift (broadcast); Softmax and the normalizations reduce and then
// rescale, which no simple kind captures, so they stay opaque.
constexpr auto kTable = std::to_array<Entry>({
    {"Abs", OpKind::kElementwise},
    {"Acos", OpKind::kElementwise},
    {"Acosh", OpKind::kElementwise},
    {"Add", OpKind::kBroadcast},
    {"And", OpKind::kBroadcast},
    {"ArgMax", OpKind::kReduction},
    {"ArgMin", OpKind::kReduction},
    {"Asin", OpKind::kElementwise},
    {"Asinh", OpKind::kElementwise},
    {"Atan", OpKind::kElementwise},
    {"Atanh", OpKind::kElementwise},
    {"AveragePool", OpKind::kOutElementwiseFusable},
    {"BatchNormalization", OpKind::kBroadcast},
    {"Cast", OpKind::kElementwise},
    {"Ceil", OpKind::kElementwise},
    {"Celu", OpKind::kElementwise},
    {"Clip", OpKind::kElementwise},
    {"Concat", OpKind::kInjective},
    {"Conv", OpKind::kOutElementwiseFusable},
    {"ConvTranspose", OpKind::kOutElementwiseFusable},
    {"Cos", OpKind::kElementwise},
    {"Cosh", OpKind::kElementwise},
    {"DepthToSpace", OpKind::kInjective},
    {"Div", OpKind::kBroadcast},
    {"Dropout", OpKind::kElementwise},
    {"Elu", OpKind::kElementwise},
    {"Equal", OpKind::kBroadcast},
    {"Erf", OpKind::kElementwise},
    {"Exp", OpKind::kElementwise},
    {"Expand", OpKind::kBroadcast},
    {"Flatten", OpKind::kInjective},
    {"Floor", OpKind::kElementwise},
    {"Gather", OpKind::kInjective},
    {"GatherElements", OpKind::kInjective},
    {"Gelu", OpKind::kElementwise},
    {"Gemm", OpKind::kOutElementwiseFusable},
    {"GlobalAveragePool", OpKind::kOutElementwiseFusable},
    {"GlobalMaxPool", OpKind::kOutElementwiseFusable},
    {"Greater", OpKind::kBroadcast},
    {"GreaterOrEqual", OpKind::kBroadcast},
    {"HardSigmoid", OpKind::kElementwise},
    {"HardSwish", OpKind::kElementwise},
    {"Identity", OpKind::kElementwise},
    {"IsInf", OpKind::kElementwise},
    {"IsNaN", OpKind::kElementwise},
    {"LeakyRelu", OpKind::kElementwise},
    {"Less", OpKind::kBroadcast},
    {"LessOrEqual", OpKind::kBroadcast},
    {"Log", OpKind::kElementwise},
    {"MatMul", OpKind::kOutElementwiseFusable},
    {"Max", OpKind::kBroadcast},
    {"MaxPool", OpKind::kOutElementwiseFusable},
    {"Mean", OpKind::kBroadcast},
    {"Min", OpKind::kBroadcast},
    {"Mish", OpKind::kElementwise},
    {"Mod", OpKind::kBroadcast},
    {"Mul", OpKind::kBroadcast},
    {"Neg", OpKind::kElementwise},
    {"Not", OpKind::kElementwise},
    {"Or", OpKind::kBroadcast},
    {"PRelu", OpKind::kBroadcast},
    {"Pad", OpKind::kInjective},
    {"Pow", OpKind::kBroadcast},
    {"Reciprocal", OpKind::kElementwise},
    {"ReduceL1", OpKind::kReduction},
    {"ReduceL2", OpKind::kReduction},
    {"ReduceLogSumExp", OpKind::kReduction},
    {"ReduceMax", OpKind::kReduction},
    {"ReduceMean", OpKind::kReduction},
    {"ReduceMin", OpKind::kReduction},
    {"ReduceProd", OpKind::kReduction},
    {"ReduceSum", OpKind::kReduction},
    {"ReduceSumSquare", OpKind::kReduction},
    {"Relu", OpKind::kElementwise},
    {"Reshape", OpKind::kInjective},
    {"Round", OpKind::kElementwise},
    {"Selu", OpKind::kElementwise},
    {"Shrink", OpKind::kElementwise},
    {"Sigmoid", OpKind::kElementwise},
    {"Sign", OpKind::kElementwise},
    {"Sin", OpKind::kElementwise},
    {"Sinh", OpKind::kElementwise},
    {"Slice", OpKind::kInjective},
    {"Softplus", OpKind::kElementwise},
    {"Softsign", OpKind::kElementwise},
    {"SpaceToDepth", OpKind::kInjective},
    {"Split", OpKind::kInjective},
    {"Sqrt", OpKind::kElementwise},
    {"Squeeze", OpKind::kInjective},
    {"Sub", OpKind::kBroadcast},
    {"Sum", OpKind::kBroadcast},
    {"Swish", OpKind::kElementwise},
    {"Tan", OpKind::kElementwise},
    {"Tanh", OpKind::kElementwise},
    {"ThresholdedRelu", OpKind::kElementwise},
    {"Tile", OpKind::kInjective},
    {"Transpose", OpKind::kInjective},
    {"Unsqueeze", OpKind::kInjective},
    {"Where", OpKind::kBroadcast},
    {"Xor", OpKind::kBroadcast},
});

static_assert(std::is_sorted(kTable.begin(), kTable.end(),
                             [](const Entry& a, const Entry& b) { return a.first < b.first; }),
              "op kind table must be sorted by op type");

}  // namespace

OpKind op_kind_of(std::string_view op_type) {
  auto it =
      std::lower_bound(kTable.begin(), kTable.end(), op_type,
                       [](const Entry& entry, std::string_view key) { return entry.first < key; });
  if (it == kTable.end() || it->first != op_type) return OpKind::kOpaque;
  return it->second;
}

std::string_view op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::kElementwise:
      return "elementwise";
    case OpKind::kBroadcast:
      return "broadcast";
    case OpKind::kInjective:
      return "injective";
    case OpKind::kReduction:
      return "reduction";
    case OpKind::kOutElementwiseFusable:
      return "out-elementwise-fusable";
    case OpKind::kOpaque:
      return "opaque";
  }
  return "?";
}

}  // namespace collage
