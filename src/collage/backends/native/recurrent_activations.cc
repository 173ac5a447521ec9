#include "collage/backends/native/recurrent_activations.h"

#include <fmt/format.h>
#include <immintrin.h>

#include <limits>
#include <string>
#include <string_view>

#include "collage/backends/native/vector_math.h"
#include "collage/ir/error.h"
#include "collage/ir/recurrent.h"

namespace collage::native {
namespace {

struct ActivationName {
  std::string_view name;
  Activation::Kind kind;
  bool takes_alpha;
  bool takes_beta;
  float alpha;
  float beta;
};

constexpr ActivationName kActivations[] = {
    {"Sigmoid", Activation::kSigmoid, false, false, 0.0f, 0.0f},
    {"Tanh", Activation::kTanh, false, false, 0.0f, 0.0f},
    {"Relu", Activation::kRelu, false, false, 0.0f, 0.0f},
    {"Affine", Activation::kAffine, true, true, 1.0f, 0.0f},
    {"LeakyRelu", Activation::kLeakyRelu, true, false, 0.01f, 0.0f},
    {"ThresholdedRelu", Activation::kThresholdedRelu, true, false, 1.0f, 0.0f},
    {"ScaledTanh", Activation::kScaledTanh, true, true, 1.0f, 1.0f},
    {"HardSigmoid", Activation::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"Elu", Activation::kElu, true, false, 1.0f, 0.0f},
    {"Softsign", Activation::kSoftsign, false, false, 0.0f, 0.0f},
    {"Softplus", Activation::kSoftplus, false, false, 0.0f, 0.0f},
};

const ActivationName* find_activation(std::string_view name) {
  for (const ActivationName& entry : kActivations) {
    if (same_activation(entry.name, name)) return &entry;
  }
  return nullptr;
}

}  // namespace

std::vector<Activation> activations_of(const Node& node, int directions) {
  const std::vector<std::string> names = recurrent_activations(node, directions);
  std::vector<float> alphas, betas;
  if (node.attributes.has("activation_alpha"))
    alphas = node.attributes.get_floats("activation_alpha");
  if (node.attributes.has("activation_beta")) betas = node.attributes.get_floats("activation_beta");
  std::size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> activations;
  for (const std::string& name : names) {
    const ActivationName* entry = find_activation(name);
    if (entry == nullptr) {
      throw Error(fmt::format("activation '{}' is not supported", name),
                  {.node = node.name, .field = "activations"});
    }
    Activation a{entry->kind, entry->alpha, entry->beta};
    if (entry->takes_alpha && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (entry->takes_beta && next_beta < betas.size()) a.beta = betas[next_beta++];
    activations.push_back(a);
  }
  return activations;
}

void activate(const Activation& a, float clip, float* x, std::int64_t n) {
  std::int64_t i = 0;
  if (a.kind == Activation::kSigmoid || a.kind == Activation::kTanh) {
    const __m256 high = _mm256_set1_ps(clip > 0.0f ? clip : std::numeric_limits<float>::max());
    const __m256 low = _mm256_sub_ps(_mm256_setzero_ps(), high);
    const bool sigmoid = a.kind == Activation::kSigmoid;
    for (; i + 8 <= n; i += 8) {
      const __m256 v = _mm256_min_ps(_mm256_max_ps(_mm256_loadu_ps(x + i), low), high);
      _mm256_storeu_ps(x + i, sigmoid ? sigmoid8(v) : tanh8(v));
    }
  }
  for (; i < n; ++i) x[i] = a(clip > 0.0f ? std::clamp(x[i], -clip, clip) : x[i]);
}

}  // namespace collage::native
