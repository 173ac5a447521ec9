#include "collage/backends/openblas/epilogue.h"

#include <algorithm>

namespace collage::openblas {
namespace {

// Work is split into blocks of this many floats (16 KiB: every step of the
// epilogue finds the block in L1).
constexpr std::int64_t kBlock = 4096;
// Below this many elements a parallel region costs more than it saves.
constexpr std::int64_t kParallelMin = 1 << 15;

// The addend's element stride for each output dim; 0 where it is broadcast.
// Fails when its shape does not broadcast to `output`.
Result<std::vector<std::int64_t>> broadcast_strides(const Shape& addend, const Shape& output) {
  const std::size_t rank = output.size();
  if (addend.size() > rank) return Failure{"an added operand has a higher rank than the output"};
  std::vector<std::int64_t> strides(rank, 0);
  std::int64_t stride = 1;
  for (std::size_t k = 0; k < addend.size(); ++k) {
    std::size_t j = addend.size() - 1 - k;
    std::size_t i = rank - 1 - k;
    if (addend[j] == output[i]) {
      strides[i] = output[i] == 1 ? 0 : stride;
    } else if (addend[j] != 1) {
      return Failure{"an added operand of shape " + shape_to_string(addend) +
                     " does not broadcast to the output " + shape_to_string(output)};
    }
    stride *= addend[j];
  }
  return strides;
}

}  // namespace

bool broadcasts_to(const Shape& from, const Shape& to) { return broadcast_strides(from, to).ok(); }

Result<Epilogue> Epilogue::plan(const Shape& output, std::vector<EpilogueStep> steps) {
  const std::size_t rank = output.size();
  std::vector<std::vector<std::int64_t>> strides;
  for (const EpilogueStep& step : steps) {
    const auto* addend = std::get_if<Addend>(&step);
    if (addend == nullptr) continue;
    Result<std::vector<std::int64_t>> s = broadcast_strides(addend->operand.shape, output);
    if (!s) return Failure{s.error()};
    strides.push_back(std::move(*s));
  }

  // Grow the row over trailing dims while every addend stays either constant
  // (all strides 0) or contiguous (stride == elements of the row so far).
  enum class Mode { kUndecided, kPerRow, kContiguous };
  std::vector<Mode> modes(strides.size(), Mode::kUndecided);
  std::size_t row_dims = 0;
  std::int64_t row_length = 1;
  for (; row_dims < rank; ++row_dims) {
    std::size_t d = rank - 1 - row_dims;
    if (output[d] == 1) continue;
    std::vector<Mode> next = modes;
    bool fits = true;
    for (std::size_t a = 0; a < strides.size() && fits; ++a) {
      Mode here = strides[a][d] == 0 ? Mode::kPerRow : Mode::kContiguous;
      if (here == Mode::kContiguous && strides[a][d] != row_length) fits = false;
      if (next[a] != Mode::kUndecided && next[a] != here) fits = false;
      next[a] = here;
    }
    if (!fits) break;
    modes = std::move(next);
    row_length *= output[d];
  }

  Epilogue epilogue;
  epilogue.outer_dims_.assign(output.begin(), output.end() - static_cast<std::ptrdiff_t>(row_dims));
  epilogue.row_length_ = row_length;
  epilogue.rows_ = shape_numel(epilogue.outer_dims_);
  std::size_t a = 0;
  for (EpilogueStep& step : steps) {
    if (auto* activation = std::get_if<Activation>(&step)) {
      epilogue.steps_.emplace_back(*activation);
      continue;
    }
    auto& addend = std::get<Addend>(step);
    PlannedAddend planned{
        std::move(addend.operand), addend.scale, modes[a] != Mode::kContiguous,
        std::vector<std::int64_t>(strides[a].begin(),
                                  strides[a].begin() + epilogue.outer_dims_.size())};
    epilogue.steps_.emplace_back(std::move(planned));
    ++a;
  }
  if (shape_numel(output) == 0) epilogue.rows_ = 0;
  return epilogue;
}

void Epilogue::apply(std::span<const Tensor> inputs, float* out, int threads) const {
  if (steps_.empty() || rows_ == 0 || row_length_ == 0) return;
  const std::int64_t blocks_per_row = (row_length_ + kBlock - 1) / kBlock;
  const std::int64_t items = rows_ * blocks_per_row;
  const bool parallel = threads > 1 && rows_ * row_length_ >= kParallelMin && items > 1;
  const std::size_t outer_rank = outer_dims_.size();

#pragma omp parallel for num_threads(threads) schedule(static) if (parallel)
  for (std::int64_t item = 0; item < items; ++item) {
    const std::int64_t row = item / blocks_per_row;
    const std::int64_t begin = (item % blocks_per_row) * kBlock;
    const std::int64_t count = std::min(kBlock, row_length_ - begin);
    float* block = out + row * row_length_ + begin;
    for (const PlannedStep& step : steps_) {
      if (const auto* activation = std::get_if<Activation>(&step)) {
        activation->apply(block, count);
        continue;
      }
      const auto& addend = std::get<PlannedAddend>(step);
      std::int64_t offset = 0;
      for (std::size_t d = outer_rank, rest = static_cast<std::size_t>(row); d-- > 0;) {
        const auto dim = static_cast<std::size_t>(outer_dims_[d]);
        offset += static_cast<std::int64_t>(rest % dim) * addend.outer_strides[d];
        rest /= dim;
      }
      const float* source = addend.operand.data(inputs) + offset;
      const float scale = addend.scale;
      if (addend.per_row) {
        const float value = scale * source[0];
        for (std::int64_t j = 0; j < count; ++j) block[j] += value;
      } else {
        source += begin;
        for (std::int64_t j = 0; j < count; ++j) block[j] += scale * source[j];
      }
    }
  }
}

}  // namespace collage::openblas
