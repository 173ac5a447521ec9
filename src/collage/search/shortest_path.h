// The search for the cheapest cover of a graph by candidate partitions.
//
// Collage's central step: given every candidate of every backend, choose
// disjoint candidates that together cover every operator, at the lowest
// total estimated cost. It is a shortest path problem. A state is the set of
// covered nodes; from a state, the next node to cover is the smallest
// uncovered index, and because indices are topological, only candidates
// whose smallest index is that node can extend the state (any other
// candidate holding it also holds a smaller, already covered node). Graph
// inputs and constants are covered at zero cost. Dijkstra's algorithm over
// these states, with a binary heap and lazy deletion, finds the cheapest
// complete cover; ties break on the covered set so results never depend on
// hash order.
//
// Two candidates that are each convex can still feed each other, which no
// execution order can satisfy. An extension whose partitions, together
// with the ones already on its path, would form such a cycle is rejected and
// the search goes on. Only a chosen partition that joins nodes the graph
// does not connect (possible with several exits) can close such a cycle, so
// a state also holds the route's partitions of that kind: the cycle test
// depends on the state alone, and the search stays exact. Candidates are
// estimated lazily, at most once each, and only when the search first
// tries them; an invalid cost removes a candidate from the search. The
// caller must offer at least one candidate for every operator (the native
// backend's singletons), or the search reports the node it cannot cover.
//
// With BoundaryCosts, an extension also pays the layout conversions at its
// boundaries with the partitions already on the path (cost/boundary_costs.h;
// graph inputs and outputs are timed plain and charge nothing): each boundary is charged
// once, when its second side is placed. Which backend covers a neighbour
// is then part of the cost, so a state is the covered set together with
// the backend of each covered operator next to an uncovered one: two
// routes to one covered set through different neighbours are both kept,
// and the charges are exact. Where many covered operators border uncovered
// ones (DenseNet, whose every layer feeds every later layer of its block),
// the frontiers multiply: the search expands only the kMaxRoutesPerCover
// cheapest routes to each covered set, plus every route whose frontier is
// all on one backend (the cheapest so far may be those whose boundary
// charges are still to come). It is exact wherever no covered set is
// reached by more mixed frontiers than that.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "collage/cost/boundary_costs.h"
#include "collage/cost/cost.h"
#include "collage/cost/cost_estimator.h"
#include "collage/partition/candidate_partition.h"
#include "collage/partition/dataflow_graph.h"

namespace collage {

struct ChosenPartition {
  CandidatePartition candidate;
  Cost cost;
};

// With boundary charges, the most routes (frontiers) to one covered set
// that the search expands.
inline constexpr int kMaxRoutesPerCover = 8;

struct SearchStats {
  // Candidates offered to the search.
  std::size_t candidates = 0;
  // Candidates the search asked the estimator about.
  std::size_t candidates_estimated = 0;
  // Distinct covered sets reached, and those taken off the heap.
  std::size_t states_reached = 0;
  std::size_t states_expanded = 0;
  // Extensions skipped because the candidate's cost is invalid.
  std::size_t invalid_skipped = 0;
  // Extensions rejected because they would form a cycle between partitions.
  std::size_t cycles_rejected = 0;
  // Routes not expanded because their covered set had kMaxRoutesPerCover
  // cheaper ones (mixed frontiers only).
  std::size_t routes_dropped = 0;
};

struct SearchResult {
  // The chosen candidates in an execution order (see order_partitions).
  std::vector<ChosenPartition> partitions;
  Cost total = Cost::zero();
  SearchStats stats;
};

// The cheapest cover of `dfg` by `candidates` (all over `dfg`). Throws Error
// naming the node when some operator has no candidate at all, or when every
// way to cover some node is invalid or cyclic.
SearchResult find_cheapest_cover(const DataflowGraph& dfg,
                                 const std::vector<CandidatePartition>& candidates,
                                 CostEstimator& estimator, BoundaryCosts* boundaries = nullptr);

// Adds to each partition's cost the conversions at its boundaries that it
// does (BoundaryCharge's producer side to the producer, consumer side to
// the reader).
void charge_boundaries(const DataflowGraph& dfg, std::vector<ChosenPartition>& partitions,
                       BoundaryCosts& boundaries);

// The sum of the partitions' costs.
Cost total_cost(const std::vector<ChosenPartition>& partitions);

// `partitions` (disjoint) in an execution order (order_partitions of their
// inside sets); nullopt when they would feed each other in a cycle.
std::optional<std::vector<ChosenPartition>> in_execution_order(
    const DataflowGraph& dfg, std::vector<ChosenPartition> partitions);

}  // namespace collage
