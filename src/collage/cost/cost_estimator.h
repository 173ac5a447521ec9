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

// How far a cost from CostEstimator::bound() can be trusted.
enum class Fidelity {
  // A lower bound worked out without running anything (the candidate's
  // work at the fastest rate its backend has shown for such work).
  kBound,
  // A short first timing: close to estimate()'s cost, and no larger than
  // it by more than the timing's noise.
  kScreened,
  // What estimate() returns.
  kExact,
};

struct BoundedCost {
  Cost cost;
  Fidelity fidelity = Fidelity::kExact;
};

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
  // The candidate's cost at `at_least` that fidelity, or better where that
  // is known without more work: what a search that measures only where it
  // matters starts from (collage_partitioner.h). An invalid cost is
  // always kExact. The default is estimate()'s cost.
  virtual BoundedCost bound(const DataflowGraph& dfg, const CandidatePartition& candidate,
                            Fidelity at_least) {
    (void)at_least;
    return {estimate(dfg, candidate), Fidelity::kExact};
  }
  // Whether a first look at the candidate (bound() at kScreened) costs much
  // more than at most candidates (a kernel compiled for it): the search by
  // screening raises such candidates only when nothing cheaper is left to
  // learn from. The default: no.
  virtual bool dear_to_screen(const CandidatePartition& candidate) const {
    (void)candidate;
    return false;
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
