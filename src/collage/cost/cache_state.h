// CacheState: the caches a partition finds when it runs in a plan.
//
// Timed alone, back to back, a partition finds its weights where its own
// last run left them, in L2 or L3. In a plan the rest of the model runs
// between two of its runs: every other partition's weights and activations
// pass through the caches, and a partition of a large model reads its
// weights from memory. ResNet-50's last convolutions (4 to 9 MiB of
// weights each) ran 1.3x to 1.4x their isolated time in context while its
// first ones (under 1 MiB) ran at theirs (docs/partitioning.md,
// "Measurement").
//
// So a candidate is timed in the state a plan leaves: before every timed
// call, a buffer as large as what the rest of the model touches in a run
// (or, where the last-level cache holds the model, enough to clear the
// cores' private caches: eviction_bytes()) is streamed through the caches
// (CacheEvictor), a twin of the candidate runs where the candidate touches
// less than that (the code warm again, as the partition before leaves it in
// a plan; the measurer's MeasureOptions::twin_before, twin_runs_before()),
// then the candidate's inputs are written again (rewrite), as their
// producer has just written them in a plan (MeasureOptions::Edges;
// docs/partitioning.md, "Measurement").
#pragma once

#include <cstddef>
#include <vector>

#include "collage/ir/graph.h"
#include "collage/ir/tensor.h"

namespace collage {

// The bytes the rest of `model` reads or writes in one run, outside the
// partition of `nodes`: the graph inputs, every constant that an operator
// outside reads, every value that an operator outside computes.
std::size_t bytes_touched_outside(const Graph& model, const std::vector<NodeId>& nodes);

// The data caches of this machine, from Linux's sysfs (0 where unknown):
// the largest cache private to one core (L2 on most x86 parts) and the
// last-level cache.
struct CacheSizes {
  std::size_t per_core = 0;
  std::size_t last_level = 0;
};
const CacheSizes& machine_caches();

// How much a candidate of `model` made of `nodes`, run on `threads`
// threads, is timed after evicting:
//  - bytes_touched_outside() rounded up to a power of two (so that the cache
//    keys of measurements in models of similar size agree), none below
//    kMinEvictionBytes (the rest of the model fits beside the partition in
//    L2), at most kMaxEvictionBytes (more than most last-level caches a
//    partition shares with the rest of the model, and a bound on the time
//    eviction adds);
//  - and where the model's working set (its inputs and constants, and the
//    most computed values alive at once) fits in half the last-level cache,
//    at most kPrivateCacheMultiple times the private caches of the threads,
//    rounded up to a power of two. In a plan, the rest of such a model then pushes
//    the partition's data out of the cores' private caches into the last
//    level, not out of it; streaming a few times the private caches leaves
//    the same state, and takes a fraction of the time (streaming 128 MiB
//    before each timed call was three quarters of a tune's time).
inline constexpr std::size_t kMinEvictionBytes = std::size_t{256} << 10;
inline constexpr std::size_t kMaxEvictionBytes = std::size_t{128} << 20;
inline constexpr std::size_t kPrivateCacheMultiple = 4;
std::size_t eviction_bytes(const Graph& model, const std::vector<NodeId>& nodes, int threads,
                           const CacheSizes& caches = machine_caches());

// The bytes a partition reads or writes in one run: its inputs, its
// constants and every value it computes.
std::size_t bytes_touched(const Graph& partition);

// Whether a twin of `partition` runs before each of its timed calls, after
// `evict_bytes` are streamed (MeasureOptions::twin_before): only where the
// partition touches fewer bytes than that. The twin stands for the
// partition before it in a plan, which leaves the code warm; its data add
// to what the eviction pushes out, and a partition as large as the rest of
// its model would find its own data evicted by more than a plan evicts.
bool twin_runs_before(const Graph& partition, std::size_t evict_bytes);

// Streams a buffer through the caches, on the OpenMP threads the kernels
// use (so that the pool stays awake, as in a plan). One evictor serves
// every candidate of a measurer: its buffer is allocated (and its pages
// faulted in) once, at the largest size asked for.
class CacheEvictor {
 public:
  explicit CacheEvictor(int threads) : threads_(threads) {}
  // Reads one float per cache line of the first `bytes` of the buffer.
  void evict(std::size_t bytes);
  // The buffer's size: the most evicted so far.
  std::size_t bytes() const { return buffer_.size() * sizeof(float); }

 private:
  std::vector<float> buffer_;
  int threads_;
};

// Reads every cache line of `tensors` on `threads` OpenMP threads, each a
// contiguous share.
void touch(const std::vector<Tensor>& tensors, int threads);

// Writes every cache line of `tensors` (a byte of each, stored back as it
// was: the values do not change) on `threads` OpenMP threads, each a
// contiguous share, as a producer writes the inputs of the partition after
// it: the lines are left modified in the writers' private caches, where the
// next partition's threads must fetch them from.
void rewrite(std::vector<Tensor>& tensors, int threads);

}  // namespace collage
