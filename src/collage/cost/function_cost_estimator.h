// FunctionCostEstimator: a CostEstimator made from a function.
//
// For callers whose costs come from somewhere simple (a table, a model, an
// earlier run) and for tests that need a specific cost for a specific
// candidate.
#pragma once

#include <functional>

#include "collage/cost/cost_estimator.h"

namespace collage {

class FunctionCostEstimator : public CostEstimator {
 public:
  using Function = std::function<Cost(const DataflowGraph&, const CandidatePartition&)>;

  explicit FunctionCostEstimator(Function function);
  Cost estimate(const DataflowGraph& dfg, const CandidatePartition& candidate) override;

 private:
  Function function_;
};

}  // namespace collage
