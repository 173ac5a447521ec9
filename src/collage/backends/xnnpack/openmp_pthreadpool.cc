#include "collage/backends/xnnpack/openmp_pthreadpool.h"

#include <omp.h>
#include <pthreadpool.h>
#include <xmmintrin.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <new>

// The pool is only its thread count: the threads are libgomp's.
struct pthreadpool {
  std::size_t threads;
};

namespace collage::xnnpack {
namespace {

std::atomic<std::uint64_t> parallel_calls{0};

std::size_t tiles(std::size_t range, std::size_t tile) { return (range + tile - 1) / tile; }

// Flush-to-zero and denormals-are-zero for the duration of a task, when the
// caller asks for PTHREADPOOL_FLAG_DISABLE_DENORMALS.
class ScopedDenormals {
 public:
  explicit ScopedDenormals(std::uint32_t flags)
      : active_((flags & PTHREADPOOL_FLAG_DISABLE_DENORMALS) != 0), saved_(_mm_getcsr()) {
    if (active_) _mm_setcsr(saved_ | 0x8040);
  }
  ~ScopedDenormals() {
    if (active_) _mm_setcsr(saved_);
  }
  ScopedDenormals(const ScopedDenormals&) = delete;
  ScopedDenormals& operator=(const ScopedDenormals&) = delete;

 private:
  bool active_;
  unsigned saved_;
};

// One thread's share of a parallel call: items [front, back), packed in one
// word (front in the high half) so that the owner taking from the front
// and a thief taking from the back never take the same item.
struct alignas(64) ItemRange {
  std::atomic<std::uint64_t> bounds;

  // The next item from the front (owner) or the back (thief); false when
  // the range is empty.
  bool take(bool from_front, std::size_t& index) {
    std::uint64_t b = bounds.load(std::memory_order_relaxed);
    for (;;) {
      const std::uint64_t front = b >> 32;
      const std::uint64_t back = b & 0xffffffffu;
      if (front >= back) return false;
      const std::uint64_t taken = from_front ? (front + 1) << 32 | back : front << 32 | (back - 1);
      if (bounds.compare_exchange_weak(b, taken, std::memory_order_acq_rel)) {
        index = static_cast<std::size_t>(from_front ? front : back - 1);
        return true;
      }
    }
  }
};

constexpr std::size_t kMaxTeam = 64;

// Runs item(0) .. item(count - 1) over the pool's threads, as pthreadpool
// does: each thread takes the items of its contiguous share in order, then
// takes what is left of the others' shares from their ends. When one core
// runs slower than the other (this machine's two vCPUs at times do, only
// while both are busy), the faster one finishes the slower one's items
// instead of waiting at the barrier: XNNPACK's EfficientNet-B0 at two
// threads ran 14-15.6 ms instead of 20.6-21.4 in such spells, and the same
// 7.3-7.6 ms outside them. Nested calls (from inside an OpenMP region) and
// pools of one thread run on the caller.
template <typename Item>
void parallel_items(pthreadpool_t pool, std::size_t count, std::uint32_t flags, Item item) {
  if (count == 0) return;
  std::size_t threads = pool == nullptr ? 1 : std::min({pool->threads, count, kMaxTeam});
  if (threads <= 1 || omp_in_parallel() || count > 0xffffffffu) {
    ScopedDenormals denormals(flags);
    for (std::size_t i = 0; i < count; ++i) item(i);
    return;
  }
  parallel_calls.fetch_add(1, std::memory_order_relaxed);
  std::array<ItemRange, kMaxTeam> ranges;
  for (std::size_t t = 0; t < threads; ++t) {
    const std::uint64_t begin = count * t / threads;
    const std::uint64_t end = count * (t + 1) / threads;
    ranges[t].bounds.store(begin << 32 | end, std::memory_order_relaxed);
  }
#pragma omp parallel num_threads(static_cast <int>(threads))
  {
    ScopedDenormals denormals(flags);
    // A team smaller than asked leaves its missing members' shares to be
    // taken from their ends.
    const auto self = static_cast<std::size_t>(omp_get_thread_num());
    std::size_t index = 0;
    while (ranges[self].take(true, index)) item(index);
    for (std::size_t k = 1; k < threads; ++k) {
      ItemRange& other = ranges[(self + k) % threads];
      while (other.take(false, index)) item(index);
    }
  }
}

}  // namespace

std::uint64_t openmp_pool_parallel_calls() { return parallel_calls.load(); }

}  // namespace collage::xnnpack

using collage::xnnpack::parallel_items;
using collage::xnnpack::tiles;

extern "C" {

pthreadpool_t pthreadpool_create(size_t threads_count) {
  if (threads_count == 0) threads_count = static_cast<size_t>(omp_get_num_procs());
  return new (std::nothrow) pthreadpool{threads_count};
}

void pthreadpool_destroy(pthreadpool_t threadpool) { delete threadpool; }

size_t pthreadpool_get_threads_count(pthreadpool_t threadpool) {
  return threadpool == nullptr ? 1 : threadpool->threads;
}

void pthreadpool_parallelize_1d(pthreadpool_t threadpool, pthreadpool_task_1d_t function,
                                void* context, size_t range, uint32_t flags) {
  parallel_items(threadpool, range, flags, [&](size_t i) { function(context, i); });
}

void pthreadpool_parallelize_1d_tile_1d(pthreadpool_t threadpool,
                                        pthreadpool_task_1d_tile_1d_t function, void* context,
                                        size_t range, size_t tile, uint32_t flags) {
  parallel_items(threadpool, tiles(range, tile), flags, [&](size_t t) {
    size_t i = t * tile;
    function(context, i, std::min(tile, range - i));
  });
}

void pthreadpool_parallelize_2d(pthreadpool_t threadpool, pthreadpool_task_2d_t function,
                                void* context, size_t range_i, size_t range_j, uint32_t flags) {
  parallel_items(threadpool, range_i * range_j, flags,
                 [&](size_t n) { function(context, n / range_j, n % range_j); });
}

void pthreadpool_parallelize_2d_tile_1d(pthreadpool_t threadpool,
                                        pthreadpool_task_2d_tile_1d_t function, void* context,
                                        size_t range_i, size_t range_j, size_t tile_j,
                                        uint32_t flags) {
  const size_t tiles_j = tiles(range_j, tile_j);
  parallel_items(threadpool, range_i * tiles_j, flags, [&](size_t n) {
    size_t j = (n % tiles_j) * tile_j;
    function(context, n / tiles_j, j, std::min(tile_j, range_j - j));
  });
}

void pthreadpool_parallelize_2d_tile_2d(pthreadpool_t threadpool,
                                        pthreadpool_task_2d_tile_2d_t function, void* context,
                                        size_t range_i, size_t range_j, size_t tile_i,
                                        size_t tile_j, uint32_t flags) {
  const size_t tiles_j = tiles(range_j, tile_j);
  parallel_items(threadpool, tiles(range_i, tile_i) * tiles_j, flags, [&](size_t n) {
    size_t i = (n / tiles_j) * tile_i;
    size_t j = (n % tiles_j) * tile_j;
    function(context, i, j, std::min(tile_i, range_i - i), std::min(tile_j, range_j - j));
  });
}

void pthreadpool_parallelize_3d(pthreadpool_t threadpool, pthreadpool_task_3d_t function,
                                void* context, size_t range_i, size_t range_j, size_t range_k,
                                uint32_t flags) {
  parallel_items(threadpool, range_i * range_j * range_k, flags, [&](size_t n) {
    size_t k = n % range_k;
    n /= range_k;
    function(context, n / range_j, n % range_j, k);
  });
}

void pthreadpool_parallelize_3d_tile_2d(pthreadpool_t threadpool,
                                        pthreadpool_task_3d_tile_2d_t function, void* context,
                                        size_t range_i, size_t range_j, size_t range_k,
                                        size_t tile_j, size_t tile_k, uint32_t flags) {
  const size_t tiles_j = tiles(range_j, tile_j);
  const size_t tiles_k = tiles(range_k, tile_k);
  parallel_items(threadpool, range_i * tiles_j * tiles_k, flags, [&](size_t n) {
    size_t k = (n % tiles_k) * tile_k;
    n /= tiles_k;
    size_t j = (n % tiles_j) * tile_j;
    function(context, n / tiles_j, j, k, std::min(tile_j, range_j - j),
             std::min(tile_k, range_k - k));
  });
}

void pthreadpool_parallelize_4d(pthreadpool_t threadpool, pthreadpool_task_4d_t function,
                                void* context, size_t range_i, size_t range_j, size_t range_k,
                                size_t range_l, uint32_t flags) {
  parallel_items(threadpool, range_i * range_j * range_k * range_l, flags, [&](size_t n) {
    size_t l = n % range_l;
    n /= range_l;
    size_t k = n % range_k;
    n /= range_k;
    function(context, n / range_j, n % range_j, k, l);
  });
}

void pthreadpool_parallelize_4d_tile_2d(pthreadpool_t threadpool,
                                        pthreadpool_task_4d_tile_2d_t function, void* context,
                                        size_t range_i, size_t range_j, size_t range_k,
                                        size_t range_l, size_t tile_k, size_t tile_l,
                                        uint32_t flags) {
  const size_t tiles_k = tiles(range_k, tile_k);
  const size_t tiles_l = tiles(range_l, tile_l);
  parallel_items(threadpool, range_i * range_j * tiles_k * tiles_l, flags, [&](size_t n) {
    size_t l = (n % tiles_l) * tile_l;
    n /= tiles_l;
    size_t k = (n % tiles_k) * tile_k;
    n /= tiles_k;
    function(context, n / range_j, n % range_j, k, l, std::min(tile_k, range_k - k),
             std::min(tile_l, range_l - l));
  });
}

void pthreadpool_parallelize_5d(pthreadpool_t threadpool, pthreadpool_task_5d_t function,
                                void* context, size_t range_i, size_t range_j, size_t range_k,
                                size_t range_l, size_t range_m, uint32_t flags) {
  parallel_items(threadpool, range_i * range_j * range_k * range_l * range_m, flags, [&](size_t n) {
    size_t m = n % range_m;
    n /= range_m;
    size_t l = n % range_l;
    n /= range_l;
    size_t k = n % range_k;
    n /= range_k;
    function(context, n / range_j, n % range_j, k, l, m);
  });
}

void pthreadpool_parallelize_5d_tile_2d(pthreadpool_t threadpool,
                                        pthreadpool_task_5d_tile_2d_t function, void* context,
                                        size_t range_i, size_t range_j, size_t range_k,
                                        size_t range_l, size_t range_m, size_t tile_l,
                                        size_t tile_m, uint32_t flags) {
  const size_t tiles_l = tiles(range_l, tile_l);
  const size_t tiles_m = tiles(range_m, tile_m);
  parallel_items(threadpool, range_i * range_j * range_k * tiles_l * tiles_m, flags, [&](size_t n) {
    size_t m = (n % tiles_m) * tile_m;
    n /= tiles_m;
    size_t l = (n % tiles_l) * tile_l;
    n /= tiles_l;
    size_t k = n % range_k;
    n /= range_k;
    function(context, n / range_j, n % range_j, k, l, m, std::min(tile_l, range_l - l),
             std::min(tile_m, range_m - m));
  });
}

void pthreadpool_parallelize_6d_tile_2d(pthreadpool_t threadpool,
                                        pthreadpool_task_6d_tile_2d_t function, void* context,
                                        size_t range_i, size_t range_j, size_t range_k,
                                        size_t range_l, size_t range_m, size_t range_n,
                                        size_t tile_m, size_t tile_n, uint32_t flags) {
  const size_t tiles_m = tiles(range_m, tile_m);
  const size_t tiles_n = tiles(range_n, tile_n);
  parallel_items(threadpool, range_i * range_j * range_k * range_l * tiles_m * tiles_n, flags,
                 [&](size_t index) {
                   size_t n = (index % tiles_n) * tile_n;
                   index /= tiles_n;
                   size_t m = (index % tiles_m) * tile_m;
                   index /= tiles_m;
                   size_t l = index % range_l;
                   index /= range_l;
                   size_t k = index % range_k;
                   index /= range_k;
                   function(context, index / range_j, index % range_j, k, l, m, n,
                            std::min(tile_m, range_m - m), std::min(tile_n, range_n - n));
                 });
}

}  // extern "C"
