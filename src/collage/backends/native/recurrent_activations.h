// The activation functions of the native recurrent ops (RNN, GRU, LSTM):
// those ONNX's recurrent ops name, by name, with their alpha and beta, and
// applying one to a row of values.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "collage/ir/graph.h"

namespace collage::native {

// The activation functions ONNX's recurrent ops name, with their alpha and
// beta (the defaults of the op of the same name).
struct Activation {
  enum Kind {
    kSigmoid,
    kTanh,
    kRelu,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus,
  };
  Kind kind = kSigmoid;
  float alpha = 0.0f;
  float beta = 0.0f;

  float operator()(float x) const {
    switch (kind) {
      case kSigmoid:
        return 1.0f / (1.0f + std::exp(-x));
      case kTanh:
        return std::tanh(x);
      case kRelu:
        return std::max(x, 0.0f);
      case kAffine:
        return alpha * x + beta;
      case kLeakyRelu:
        return x >= 0.0f ? x : alpha * x;
      case kThresholdedRelu:
        return x > alpha ? x : 0.0f;
      case kScaledTanh:
        return alpha * std::tanh(beta * x);
      case kHardSigmoid:
        return std::clamp(alpha * x + beta, 0.0f, 1.0f);
      case kElu:
        return x >= 0.0f ? x : alpha * (std::exp(x) - 1.0f);
      case kSoftsign:
        return x / (1.0f + std::fabs(x));
      case kSoftplus:
        return std::log1p(std::exp(x));
    }
    return x;
  }
};

// The activations of every direction of a recurrent `node`, in order
// (forward's, then reverse's; ir/recurrent.h), each taking the next of
// activation_alpha / activation_beta if it uses one. Throws Error naming the
// node for an activation that is not supported.
std::vector<Activation> activations_of(const Node& node, int directions);

// Applies `a` to n values in place, each first bounded to [-clip, clip]
// when clip > 0. Sigmoid and Tanh, the defaults, run eight at a time.
void activate(const Activation& a, float clip, float* x, std::int64_t n);

}  // namespace collage::native
