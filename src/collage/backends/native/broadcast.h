// Numpy broadcasting, as index arithmetic for the elementwise loops.
//
// Binary and variadic ops (Add, Where, the fused elementwise loops) read each
// input at the output coordinate mapped through numpy's rule: shapes are
// right-aligned, and a dimension of 1 repeats. A BroadcastPlan turns that
// rule into strides (0 along repeated dimensions) over a simplified output
// shape: output dimensions of size 1 are dropped and neighbouring dimensions
// that every input walks the same way are merged. The innermost loop is then
// as long as it can be, and in it every input moves with stride 0 or 1, which
// is what lets the loops below run over contiguous runs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "collage/ir/tensor_type.h"

namespace collage::native {

// Element counts below this run on one thread: waking a team costs more than
// the loop itself.
inline constexpr std::int64_t kParallelMinElements = std::int64_t{1} << 15;

// How many threads a loop over `elements` elements should use.
inline int threads_for(std::int64_t elements, int threads) {
  if (threads <= 1 || elements < kParallelMinElements) return 1;
  return static_cast<int>(std::min<std::int64_t>(threads, elements / (kParallelMinElements / 4)));
}

// Row-major strides of `shape`, in elements.
std::vector<std::int64_t> row_major_strides(const Shape& shape);

// Whether `from` broadcasts to `to` under numpy's rule (unidirectionally).
bool broadcasts_to(const Shape& from, const Shape& to);

// The numpy broadcast of `a` and `b`; throws Error when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b);

struct BroadcastPlan {
  // The simplified output shape; never empty (a scalar output is {1}). The
  // last dimension is the inner loop.
  Shape dims;
  // strides[input][dim]: element strides of each input over `dims`, 0 where
  // the input repeats. The inner stride of every input is 0 or 1.
  std::vector<std::vector<std::int64_t>> strides;

  std::int64_t inner() const { return dims.back(); }
  std::int64_t rows() const;
  std::int64_t inner_stride(std::size_t input) const { return strides[input].back(); }
  // Element offsets of every input at the first element of `row`.
  void row_offsets(std::int64_t row, std::int64_t* offsets) const;
};

// The plan for reading `inputs` broadcast to `out`. Throws Error when an
// input does not broadcast to `out`.
BroadcastPlan plan_broadcast(const Shape& out, std::span<const Shape> inputs);

// Calls run(out_offset, in_offsets, n) on disjoint runs of n consecutive
// output elements that together cover the output; inside a run, input k
// advances by plan.inner_stride(k) per element. Runs go to up to `threads`
// OpenMP threads when the output is large enough to pay for them.
template <typename Run>
void for_each_run(const BroadcastPlan& plan, int threads, Run&& run) {
  const std::int64_t rows = plan.rows();
  const std::int64_t inner = plan.inner();
  if (rows * inner == 0) return;
  const int team = threads_for(rows * inner, threads);
  // With fewer rows than threads, rows are cut into pieces so that every
  // thread gets work (a plain elementwise op over one tensor is one row).
  std::int64_t piece = inner;
  if (team > 1 && rows < 4 * team) {
    const std::int64_t pieces_per_row = (4 * team + rows - 1) / rows;
    piece = std::max<std::int64_t>(1024, (inner + pieces_per_row - 1) / pieces_per_row);
  }
  const std::int64_t per_row = (inner + piece - 1) / piece;
  const std::int64_t items = rows * per_row;
  const std::size_t inputs = plan.strides.size();
  auto run_item = [&](std::int64_t item, std::int64_t* offsets) {
    const std::int64_t row = item / per_row;
    const std::int64_t begin = (item % per_row) * piece;
    plan.row_offsets(row, offsets);
    for (std::size_t k = 0; k < inputs; ++k) offsets[k] += begin * plan.inner_stride(k);
    run(row * inner + begin, static_cast<const std::int64_t*>(offsets),
        std::min(piece, inner - begin));
  };
  if (team == 1) {
    std::vector<std::int64_t> offsets(inputs);
    for (std::int64_t item = 0; item < items; ++item) run_item(item, offsets.data());
    return;
  }
#pragma omp parallel num_threads(team)
  {
    std::vector<std::int64_t> offsets(inputs);
#pragma omp for schedule(static)
    for (std::int64_t item = 0; item < items; ++item) run_item(item, offsets.data());
  }
}

}  // namespace collage::native
