#include "collage/cost/cache_state.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <fstream>
#include <string>

namespace collage {
namespace {

constexpr std::size_t kLineBytes = 64;
constexpr std::size_t kFloatsPerLine = kLineBytes / sizeof(float);

// A sysfs cache size ("2048K", "300M"), 0 when unreadable.
std::size_t read_cache_size(const std::string& path) {
  std::ifstream in(path);
  std::size_t value = 0;
  char unit = 0;
  if (!(in >> value)) return 0;
  if (in >> unit) {
    if (unit == 'K') value <<= 10;
    if (unit == 'M') value <<= 20;
    if (unit == 'G') value <<= 30;
  }
  return value;
}

CacheSizes read_machine_caches() {
  CacheSizes caches;
  const std::string cpu0 = "/sys/devices/system/cpu/cpu0/cache/";
  for (int index = 0; index < 8; ++index) {
    const std::string dir = cpu0 + "index" + std::to_string(index) + "/";
    std::ifstream type_file(dir + "type");
    std::ifstream shared_file(dir + "shared_cpu_list");
    std::string type;
    std::string shared;
    if (!(type_file >> type) || !(shared_file >> shared)) continue;
    if (type == "Instruction") continue;
    const std::size_t size = read_cache_size(dir + "size");
    // A list of one CPU ("0") is private to the core; "0-1" or "0,56" is shared.
    const bool private_to_core = shared.find_first_of("-,") == std::string::npos;
    if (private_to_core) caches.per_core = std::max(caches.per_core, size);
    caches.last_level = std::max(caches.last_level, size);
  }
  return caches;
}

// What running `model` keeps in memory at its fullest: its inputs and
// constants, and the most computed values alive at once when its nodes run in
// their (topological) order, each freed after its last reader.
std::size_t working_set_bytes(const Graph& model) {
  const std::vector<std::vector<NodeId>> consumers = model.consumers();
  std::vector<std::size_t> freed_after(model.num_nodes(), 0);
  std::vector<bool> is_output(model.num_values(), false);
  for (ValueId id : model.outputs()) is_output[static_cast<std::size_t>(id)] = true;
  std::size_t fixed = 0;
  for (std::size_t v = 0; v < model.num_values(); ++v) {
    const Value& value = model.values()[v];
    if (value.producer == kNoNode) {
      fixed += value.type.byte_size();
    } else if (!is_output[v]) {
      // Freed after its last reader; a value nobody reads, after its producer.
      NodeId last = value.producer;
      for (NodeId reader : consumers[v]) last = std::max(last, reader);
      freed_after[static_cast<std::size_t>(last)] += value.type.byte_size();
    }
  }
  std::size_t live = 0;
  std::size_t peak = 0;
  for (std::size_t n = 0; n < model.num_nodes(); ++n) {
    for (ValueId id : model.node(static_cast<NodeId>(n)).outputs) {
      live += model.value(id).type.byte_size();
    }
    peak = std::max(peak, live);
    live -= freed_after[n];
  }
  return fixed + peak;
}

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

std::size_t bytes_touched(const Graph& partition) {
  std::size_t bytes = 0;
  for (const Value& value : partition.values()) bytes += value.type.byte_size();
  return bytes;
}

bool twin_runs_before(const Graph& partition, std::size_t evict_bytes) {
  return bytes_touched(partition) < evict_bytes;
}

const CacheSizes& machine_caches() {
  static const CacheSizes caches = read_machine_caches();
  return caches;
}

std::size_t eviction_bytes(const Graph& model, const std::vector<NodeId>& nodes, int threads,
                           const CacheSizes& caches) {
  const std::size_t bytes = bytes_touched_outside(model, nodes);
  if (bytes < kMinEvictionBytes) return 0;
  std::size_t evict = std::min(std::bit_ceil(bytes), kMaxEvictionBytes);
  if (caches.per_core > 0 && caches.last_level > 0 &&
      working_set_bytes(model) <= caches.last_level / 2) {
    const std::size_t cores = static_cast<std::size_t>(std::max(threads, 1));
    evict = std::min(evict, std::bit_ceil(kPrivateCacheMultiple * caches.per_core * cores));
  }
  return evict;
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

void rewrite(std::vector<Tensor>& tensors, int threads) {
  for (Tensor& tensor : tensors) {
    // Volatile, so that storing back the byte just loaded is not left out.
    auto* bytes = static_cast<volatile unsigned char*>(tensor.raw());
    const auto lines = static_cast<std::int64_t>(tensor.byte_size() / kLineBytes);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t line = 0; line < lines; ++line) {
      const auto i = static_cast<std::size_t>(line) * kLineBytes;
      bytes[i] = bytes[i];
    }
  }
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
