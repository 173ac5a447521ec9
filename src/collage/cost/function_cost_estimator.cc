#include "collage/cost/function_cost_estimator.h"

#include <cassert>

namespace collage {

FunctionCostEstimator::FunctionCostEstimator(Function function) : function_(std::move(function)) {
  assert(function_ && "FunctionCostEstimator: needs a function");
}

Cost FunctionCostEstimator::estimate(const DataflowGraph& dfg,
                                     const CandidatePartition& candidate) {
  return function_(dfg, candidate);
}

}  // namespace collage
