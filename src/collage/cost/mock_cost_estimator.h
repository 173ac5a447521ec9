// MockCostEstimator: deterministic costs for tests of partitioning and search.
//
// Costs come from a table of per-op-type costs per spec name. A candidate
// costs the sum of its operators' costs, times a fusion discount when it
// holds more than one operator, plus a fixed overhead per partition (a
// kernel launch, a boundary copy); either knob makes fewer, larger partitions
// pay off, as they do on real backends. An op type a spec has no cost for
// makes the candidate invalid, which is how tests say "this backend cannot
// run that". Host nodes (inputs, constants) cost nothing. The estimator
// counts its calls, so tests can check how many candidates were estimated.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "collage/cost/cost_estimator.h"

namespace collage {

class MockCostEstimator : public CostEstimator {
 public:
  // The cost of one `op_type` node in a partition of spec `spec_name`.
  MockCostEstimator& set_op_cost(const std::string& spec_name, const std::string& op_type,
                                 double seconds);
  // The cost of any op type the spec has no specific cost for.
  MockCostEstimator& set_default_op_cost(const std::string& spec_name, double seconds);
  // Factor applied to the op costs of a candidate with two or more
  // operators (1 = no discount).
  MockCostEstimator& set_fusion_discount(double factor);
  // Cost added once per candidate.
  MockCostEstimator& set_partition_overhead(double seconds);

  Cost estimate(const DataflowGraph& dfg, const CandidatePartition& candidate) override;

  // Number of estimate() calls so far.
  std::size_t estimate_count() const { return estimated_.size(); }
  // Each estimated candidate as CandidatePartition::to_string(), in call order.
  const std::vector<std::string>& estimated() const { return estimated_; }

 private:
  struct SpecCosts {
    std::map<std::string, double> by_op;
    bool has_default = false;
    double default_seconds = 0.0;
  };
  std::map<std::string, SpecCosts> costs_;
  double fusion_discount_ = 1.0;
  double partition_overhead_ = 0.0;
  std::vector<std::string> estimated_;
};

}  // namespace collage
