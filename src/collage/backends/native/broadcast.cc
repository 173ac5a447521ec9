#include "collage/backends/native/broadcast.h"

#include <algorithm>
#include <cassert>

#include "collage/ir/error.h"

namespace collage::native {

std::vector<std::int64_t> row_major_strides(const Shape& shape) {
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t stride = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const std::size_t skip = to.size() - from.size();
  for (std::size_t d = 0; d < from.size(); ++d) {
    if (from[d] != 1 && from[d] != to[d + skip]) return false;
  }
  return true;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    // Right-aligned: a missing leading dimension acts as 1.
    const std::int64_t da = d + a.size() >= rank ? a[d + a.size() - rank] : 1;
    const std::int64_t db = d + b.size() >= rank ? b[d + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1) {
      throw Error("shapes " + shape_to_string(a) + " and " + shape_to_string(b) +
                  " do not broadcast");
    }
    out[d] = da == 1 ? db : da;
  }
  return out;
}

std::int64_t BroadcastPlan::rows() const {
  std::int64_t rows = 1;
  for (std::size_t d = 0; d + 1 < dims.size(); ++d) rows *= dims[d];
  return rows;
}

void BroadcastPlan::row_offsets(std::int64_t row, std::int64_t* offsets) const {
  for (std::size_t k = 0; k < strides.size(); ++k) offsets[k] = 0;
  for (std::size_t d = dims.size() - 1; d-- > 0;) {
    const std::int64_t index = row % dims[d];
    row /= dims[d];
    for (std::size_t k = 0; k < strides.size(); ++k) offsets[k] += index * strides[k][d];
  }
}

BroadcastPlan plan_broadcast(const Shape& out, std::span<const Shape> inputs) {
  const std::size_t rank = out.size();
  // Strides of every input over the full output shape.
  std::vector<std::vector<std::int64_t>> full(inputs.size(), std::vector<std::int64_t>(rank, 0));
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const Shape& in = inputs[k];
    if (!broadcasts_to(in, out)) {
      throw Error("shape " + shape_to_string(in) + " does not broadcast to " +
                  shape_to_string(out));
    }
    const std::vector<std::int64_t> in_strides = row_major_strides(in);
    const std::size_t skip = rank - in.size();
    for (std::size_t d = skip; d < rank; ++d) {
      if (in[d - skip] == out[d]) full[k][d] = in_strides[d - skip];
    }
  }

  BroadcastPlan plan;
  plan.strides.resize(inputs.size());
  for (std::size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    const bool mergeable = !plan.dims.empty() && [&] {
      for (std::size_t k = 0; k < inputs.size(); ++k) {
        if (plan.strides[k].back() != full[k][d] * out[d]) return false;
      }
      return true;
    }();
    if (mergeable) {
      plan.dims.back() *= out[d];
      for (std::size_t k = 0; k < inputs.size(); ++k) plan.strides[k].back() = full[k][d];
      continue;
    }
    plan.dims.push_back(out[d]);
    for (std::size_t k = 0; k < inputs.size(); ++k) plan.strides[k].push_back(full[k][d]);
  }
  if (plan.dims.empty()) {
    plan.dims.push_back(1);
    for (auto& strides : plan.strides) strides.push_back(0);
  }
  assert(
      std::all_of(plan.strides.begin(), plan.strides.end(),
                  [](const auto& strides) { return strides.back() == 0 || strides.back() == 1; }) &&
      "plan_broadcast: inner stride must be 0 or 1");
  return plan;
}

}  // namespace collage::native
