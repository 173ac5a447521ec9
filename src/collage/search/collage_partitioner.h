// The Collage partitioner: candidates of every backend, measured, and the
// cheapest cover of the graph.
//
// Puts the pieces together in the pipeline's order (docs/architecture.md):
// gather each spec's candidates (optionally only the maximal ones), estimate
// every one of them up front (so progress and ETA are known; identical
// partitions cost one measurement), run the shortest-path search, then
// coalesce touching partitions of the same backend. Keeps every
// candidate's cost so a plan can show the runner-up alternatives of each
// partition.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collage/cost/cost_estimator.h"
#include "collage/partition/partition_spec.h"
#include "collage/search/shortest_path.h"

namespace collage {

struct EstimatedCandidate {
  CandidatePartition candidate;
  Cost cost;
  // With CollageOptions::screen, how far `cost` can be trusted: kExact for
  // the candidates that could enter the cheapest cover, a screen or a
  // bound for those that could not.
  Fidelity fidelity = Fidelity::kExact;
};

// A screen may read this much below the measurement in full: the search
// counts a screened candidate at its screen less this fraction.
inline constexpr double kScreenNoise = 0.05;

struct CollageOptions {
  // Keep only maximal candidates of each spec (single nodes always stay).
  bool prune = false;
  bool coalesce = true;
  // Conversions at boundaries between partitions, charged on the search's
  // edges and added to the chosen partitions' costs (null: none).
  BoundaryCosts* boundaries = nullptr;
  // Called after each candidate is estimated: (done, total, candidate, cost).
  std::function<void(std::size_t, std::size_t, const CandidatePartition&, const Cost&)> progress;
  // Measure only where it matters (docs/partitioning.md, "Screening"):
  // every candidate starts at its estimator's bound (Fidelity::kBound);
  // the cheapest cover under the costs known so far (a screen counted
  // kScreenNoise below itself) has each of its candidates raised one
  // fidelity, bound to screen and screen to exact, and the search runs
  // again, until the cheapest cover is all exact. With bounds and screens
  // that are no larger than the exact costs, that cover is the cheapest
  // of all; the candidates it never needed are neither measured in full
  // nor, where their bound already lost, screened. Without, every
  // candidate is estimated exactly.
  bool screen = false;
};

struct CollageResult {
  SearchResult search;
  std::vector<EstimatedCandidate> candidates;
  double seconds = 0;
  // With screening: searches run, and the candidates left screened only or
  // at their bound (never run).
  int screening_rounds = 0;
  std::size_t left_screened = 0;
  std::size_t left_bounded = 0;
};

CollageResult collage_partition(const DataflowGraph& dfg,
                                const std::vector<PartitionSpecPtr>& specs,
                                CostEstimator& estimator, const CollageOptions& options = {});

// The other candidates that could have covered the first node of `chosen`,
// cheapest first (invalid last), at most `limit`.
std::vector<EstimatedCandidate> alternatives_for(const DataflowGraph& dfg,
                                                 const CandidatePartition& chosen,
                                                 const std::vector<EstimatedCandidate>& all,
                                                 std::size_t limit);

}  // namespace collage
