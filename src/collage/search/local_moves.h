// Local moves: small changes to a chosen cover, to be measured end to end.
//
// The shortest path trusts the sum of its estimates; a plan's in-context
// profile shows where that sum is wrong (a partition that runs slower among
// its neighbours than alone, a boundary that costs more than charged). A
// local move changes one or two touching partitions and keeps the rest:
//
//   reassign  the same operators to another backend's candidate (the
//             runner-up the search passed over);
//   merge     two touching partitions as one, on either one's backend, when
//             that backend's merge config allows the union and it has a
//             candidate for every operator of it;
//   shift     the boundary between two touching partitions moved: one takes
//             a candidate of its own backend that grows into the other, the
//             other keeps the rest as a candidate of its own backend;
//   carve     operators inside a partition given to another backend's
//             candidate that ran them faster alone than the partition's
//             backend did, the partition keeping the rest as regions of
//             its backend: with one carved candidate, what does not
//             depend on it and what does; with several (every operator of
//             a kind), the operators that follow the same carved ones
//             together (carve_pieces). A plan that is one
//             library's region from end to end (single:onednn's) has no
//             neighbours to merge or shift with; a carve gives one of its
//             slow kernels (oneDNN's max pooling on AVX2, 5 to 8 times
//             native's) to another backend.
//
// Moves are proposed in the order of their predicted change: the estimates
// of what they add minus the in-context times of what they replace (a
// merge's union, not yet estimated, is predicted at the sum of its parts'
// estimates, so its predicted gain is the excess its parts showed in
// context; a carve's pieces are predicted at the partition's time less
// what its backend took for the carved operators alone). Whether a move
// pays is for a measurement of the whole plan to say
// (session/move_refinement.h).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collage/cost/boundary_costs.h"
#include "collage/cost/cost_estimator.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/search/collage_partitioner.h"
#include "collage/search/shortest_path.h"

namespace collage {

struct LocalMove {
  enum class Kind { kReassign, kMerge, kShift, kCarve };
  Kind kind = Kind::kReassign;
  // Indices into the current partitions that the move replaces.
  std::vector<std::size_t> replaced;
  // What replaces them; a merge's union and a carve's pieces have no
  // estimate yet.
  std::vector<CandidatePartition> added;
  // Predicted change of the plan's time in seconds (negative: faster).
  double predicted_seconds = 0;
  // A carve's carved partitions, the first of `added` (the pieces left of
  // the partition follow them).
  std::size_t carved = 1;
};

// "reassign", "merge", "shift", "carve".
const char* to_string(LocalMove::Kind kind);

// The operators of `inside` less those of `carved` (disjoint convex sets),
// as the convex pieces that stay: the operators that follow the same
// carved sets form one piece (a piece need not be connected). No piece
// follows and feeds the same carved set, so the pieces and the carved
// sets form no cycle. With one carved set: what precedes it and what
// follows it, the empty ones left out.
std::vector<IndexSet> carve_pieces(const DataflowGraph& dfg, const IndexSet& inside,
                                   const std::vector<IndexSet>& carved);

// "merge onednn:Conv{3} + xnnpack:Relu{4} -> onednn:Conv+Relu{3,4}".
std::string describe_move(const std::vector<ChosenPartition>& partitions, const LocalMove& move);

// The moves of `partitions` (a cover of `dfg`, costs without boundary
// charges) whose predicted change is at most 0, most promising first.
// `candidates` are the search's estimated candidates; `in_context_seconds`
// holds each partition's measured time in the plan (same order), or is
// empty to predict from the estimates alone. With `boundaries`, a carve's
// prediction includes the conversions its new boundaries need (a kernel
// that computes in another layout than its neighbours pays them twice).
// `op_in_context_seconds` holds what single operators took in the plan
// where their partition's kernel ran them as a step of their own (a
// region's pooling, its concat): a carve of such an operator saves that
// time rather than what its backend took for it alone. oneDNN's pooling
// inside GoogLeNet's region took 1.2 to 1.8 times its time alone.
// Besides each carve, the carves out of one partition onto one backend of
// operators of the same types (every MaxPool) are offered together, each
// predicted to save time alone, as one move.
std::vector<LocalMove> propose_local_moves(
    const DataflowGraph& dfg, const std::vector<ChosenPartition>& partitions,
    const std::vector<EstimatedCandidate>& candidates,
    const std::vector<double>& in_context_seconds, BoundaryCosts* boundaries = nullptr,
    const std::map<PostDfsIndex, double>& op_in_context_seconds = {});

// A cover after a move.
struct MovedCover {
  // In an execution order, costs without boundary charges.
  std::vector<ChosenPartition> partitions;
  // For each partition, its index before the move; nullopt for an added one.
  std::vector<std::optional<std::size_t>> previous;
};

// `partitions` with `move` made, the added partitions costed by
// `estimator` at `fidelity` (CostEstimator::bound; a move is timed end to
// end, so a screen, which checks the candidate as a measurement does, may
// do). Nullopt, with `why` set, when an added partition's cost is invalid
// or the partitions would feed each other in a cycle.
std::optional<MovedCover> apply_local_move(const DataflowGraph& dfg,
                                           const std::vector<ChosenPartition>& partitions,
                                           const LocalMove& move, CostEstimator& estimator,
                                           std::string& why, Fidelity fidelity = Fidelity::kExact);

// `partitions` with the conversions at their boundaries added to their
// costs (as the search charges them); unchanged without `boundaries`.
std::vector<ChosenPartition> with_boundary_charges(const DataflowGraph& dfg,
                                                   std::vector<ChosenPartition> partitions,
                                                   BoundaryCosts* boundaries);

// `partitions` as text, one line per partition (backend, the post-DFS
// indices of its nodes, rule), to store a refined cover beside the measurements.
std::string cover_to_text(const std::vector<ChosenPartition>& partitions);

// The cover `text` describes, with each partition's spec found by name in
// `specs` and its cost estimated by `estimator` (without boundary charges),
// in an execution order. Nullopt when the text does not describe a valid
// cover of `dfg` with these specs (another graph, a backend not offered, a
// partition now invalid).
std::optional<std::vector<ChosenPartition>> cover_from_text(
    const DataflowGraph& dfg, const std::vector<PartitionSpecPtr>& specs, const std::string& text,
    CostEstimator& estimator);

// Each partition with its cost estimated again by `estimator` (the search
// adds boundary charges and coalescing re-estimates; this is the cost the
// partition has alone), at `fidelity` (CostEstimator::bound; kExact:
// estimate()'s).
std::vector<ChosenPartition> with_costs_alone(const DataflowGraph& dfg,
                                              std::vector<ChosenPartition> partitions,
                                              CostEstimator& estimator,
                                              Fidelity fidelity = Fidelity::kExact);

}  // namespace collage
