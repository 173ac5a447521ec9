#include "collage/cost/mock_cost_estimator.h"

#include <cassert>

namespace collage {

MockCostEstimator& MockCostEstimator::set_op_cost(const std::string& spec_name,
                                                  const std::string& op_type, double seconds) {
  costs_[spec_name].by_op[op_type] = seconds;
  return *this;
}

MockCostEstimator& MockCostEstimator::set_default_op_cost(const std::string& spec_name,
                                                          double seconds) {
  SpecCosts& costs = costs_[spec_name];
  costs.has_default = true;
  costs.default_seconds = seconds;
  return *this;
}

MockCostEstimator& MockCostEstimator::set_fusion_discount(double factor) {
  assert(factor > 0.0 && "MockCostEstimator: the fusion discount is a positive factor");
  fusion_discount_ = factor;
  return *this;
}

MockCostEstimator& MockCostEstimator::set_partition_overhead(double seconds) {
  partition_overhead_ = seconds;
  return *this;
}

Cost MockCostEstimator::estimate(const DataflowGraph& dfg, const CandidatePartition& candidate) {
  estimated_.push_back(candidate.to_string());
  const std::string& spec = candidate.spec_name();
  auto found = costs_.find(spec);
  double seconds = 0.0;
  std::size_t operators = 0;
  for (PostDfsIndex index : candidate.sub_graph.inside()) {
    if (!dfg.is_operator(index)) continue;
    ++operators;
    const std::string& op_type = dfg.node(index).op_type;
    if (found == costs_.end()) return Cost::invalid(spec + " has no costs");
    auto op = found->second.by_op.find(op_type);
    if (op != found->second.by_op.end()) {
      seconds += op->second;
      continue;
    }
    if (!found->second.has_default) return Cost::invalid(spec + " does not run " + op_type);
    seconds += found->second.default_seconds;
  }
  if (operators == 0) return Cost::zero();
  if (operators > 1) seconds *= fusion_discount_;
  return Cost::value(seconds + partition_overhead_);
}

}  // namespace collage
