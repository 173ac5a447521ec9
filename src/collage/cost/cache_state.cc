#include "collage/cost/cache_state.h"

#include <bit>
#include <cstdint>

namespace collage {
namespace {

constexpr std::size_t kLineBytes = 64;
constexpr std::size_t kFloatsPerLine = kLineBytes / sizeof(float);

}  // namespace

std::size_t bytes_touched_outside(const Graph& model, const std::vector<NodeId>& nodes) {
  std::vector<bool> inside(model.num_nodes(), false);
  for (NodeId id : nodes) inside[static_cast<std::size_t>(id)] = true;
  const std::vector<std::vector<NodeId>> consumers = model.consumers();
  std::size_t bytes = 0;
  for (std::size_t v = 0; v < model.num_values(); ++v) {
    const Value& value = model.values()[v];
    bool outside = false;
    if (value.producer != kNoNode) {
      outside = !inside[static_cast<std::size_t>(value.producer)];
    } else {
      // A graph input or a constant: touched when an operator outside reads it.
      for (NodeId reader : consumers[v]) outside |= !inside[static_cast<std::size_t>(reader)];
    }
    if (outside) bytes += value.type.byte_size();
  }
  return bytes;
}

std::size_t eviction_bytes(const Graph& model, const std::vector<NodeId>& nodes) {
  const std::size_t bytes = bytes_touched_outside(model, nodes);
  if (bytes < kMinEvictionBytes) return 0;
  if (bytes >= kMaxEvictionBytes) return kMaxEvictionBytes;
  return std::bit_ceil(bytes);
}

void CacheEvictor::evict(std::size_t bytes) {
  if (bytes > this->bytes()) buffer_.resize(bytes / sizeof(float), 1.0f);
  const auto lines = static_cast<std::int64_t>(bytes / kLineBytes);
  const float* data = buffer_.data();
  float sum = 0;
#pragma omp parallel for num_threads(threads_) schedule(static) reduction(+ : sum)
  for (std::int64_t line = 0; line < lines; ++line) {
    sum += data[static_cast<std::size_t>(line) * kFloatsPerLine];
  }
  // Stored, so that the reads are not optimized away.
  volatile float sink = sum;
  (void)sink;
}

void touch(const std::vector<Tensor>& tensors, int threads) {
  unsigned sum = 0;
  for (const Tensor& tensor : tensors) {
    const auto* bytes = static_cast<const unsigned char*>(tensor.raw());
    const auto lines = static_cast<std::int64_t>(tensor.byte_size() / kLineBytes);
#pragma omp parallel for num_threads(threads) schedule(static) reduction(^ : sum)
    for (std::int64_t line = 0; line < lines; ++line) {
      sum ^= bytes[static_cast<std::size_t>(line) * kLineBytes];
    }
  }
  volatile unsigned sink = sum;
  (void)sink;
}

}  // namespace collage
