// Random inputs: deterministic pseudo-random data for running and timing a
// model or a partition without user-provided inputs.
//
// Timing does not care about the values, but correctness checks do: two
// backends must see the same input, so the data depends only on the seed, the
// value's name and its type (never on the platform's std:: distributions or
// on the order inputs are generated in). What is drawn:
//   - floating types: uniform in [-1, 1) by default, or standard normal;
//   - integer types: uniform in [0, 100), which is a valid index for the
//     small tables and positions tests use; an integer graph input that feeds
//     the indices of a gather or a scatter is drawn in [0, n) instead, where
//     n is the size of the axis it indexes (the smallest of them for the
//     tuples of GatherND and ScatterND), so lookups stay in range;
//   - bool: 0 or 1 with equal probability.
// An If that can take only one of its branches for the graph's shapes (the
// other cannot be typed for them) gets a condition that takes it, where a
// graph input decides the condition plainly (see random_inputs()).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "collage/ir/graph.h"

namespace collage {

enum class FloatDistribution { kUniform, kNormal };

struct RandomOptions {
  std::uint64_t seed = 0;
  FloatDistribution floats = FloatDistribution::kUniform;
  // Integers are drawn in [0, int_bound) unless the graph says less.
  std::int64_t int_bound = 100;
};

// A tensor of `type` filled from (seed, name).
Tensor random_tensor(const TensorType& type, const std::string& name,
                     const RandomOptions& options = {});

// A tensor of `type` with integers in [0, bound) (floats and bools as in
// random_tensor).
Tensor random_tensor_bounded(const TensorType& type, const std::string& name, std::int64_t bound,
                             const RandomOptions& options = {});

// For an integer value of `graph`: the exclusive bound under which its
// elements are valid indices for every gather and scatter that reads it as
// indices; `fallback` when nothing constrains it.
std::int64_t index_bound(const Graph& graph, ValueId value, std::int64_t fallback);

// One tensor per graph input, by name. Where an If can run only one branch
// for these shapes, a bool input that is its condition (through Nots), or
// a one-element integer input that an Equal compares with a constant to
// make its condition, takes the value that chooses that branch.
std::map<std::string, Tensor> random_inputs(const Graph& graph, const RandomOptions& options = {});

}  // namespace collage
