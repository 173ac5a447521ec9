// CostEstimator: what the search asks for the cost of a candidate partition.
//
// The search needs one number per candidate and does not care where it comes
// from: the measuring estimator extracts the candidate as a standalone
// Graph, compiles it with the spec's backend, checks it against the native
// reference and times it (with a persistent cache in front); tests use a
// mock with per-op costs; tools can plug in any function. An estimator
// reports failures as Cost::invalid(reason), never by throwing, so one
// backend's trouble never aborts the search. Estimators may keep state
// (caches, counters), hence the non-const estimate().
#pragma once

#include <vector>

#include "collage/cost/cost.h"
#include "collage/partition/candidate_partition.h"
#include "collage/partition/dataflow_graph.h"

namespace collage {

class CostEstimator {
 public:
  virtual ~CostEstimator() = default;
  // The cost of running `candidate` (of `dfg`) as one partition on its
  // spec's backend. `candidate.spec->backend` is the backend to use.
  virtual Cost estimate(const DataflowGraph& dfg, const CandidatePartition& candidate) = 0;
  // Called once with every candidate before they are estimated one by one:
  // an estimator may do ahead, in parallel, work that estimate() would do
  // one candidate at a time (compiling kernels). The default does nothing.
  virtual void prepare(const DataflowGraph& dfg,
                       const std::vector<CandidatePartition>& candidates) {
    (void)dfg;
    (void)candidates;
  }
  // Candidates that will probably be estimated next, one by one, though
  // maybe not all (the merges a greedy pass may try): an estimator that
  // measures elsewhere, in batches, may measure them now, together. The
  // default does nothing.
  virtual void prefetch(const DataflowGraph& dfg,
                        const std::vector<CandidatePartition>& candidates) {
    (void)dfg;
    (void)candidates;
  }
};

}  // namespace collage
