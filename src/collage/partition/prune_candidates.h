// Pruning: dropping candidates that are unlikely to be chosen before they
// are estimated.
//
// Estimating a candidate means compiling and timing it, which dominates the
// cost of a tuning run. When a backend can run a larger region in one go,
// the smaller regions strictly inside it rarely win, so a run may keep only
// the maximal candidates of each spec. Single-node candidates are always
// kept: they are what guarantees that every node can be covered whichever
// larger candidates the search picks around it (two maximal candidates may
// overlap, and then neither can be combined with the other).
#pragma once

#include <vector>

#include "collage/partition/candidate_partition.h"

namespace collage {

// The candidates, in their order, without those whose inside set is a strict
// subset of another candidate's of the same spec (single nodes excepted).
std::vector<CandidatePartition> prune_candidates(std::vector<CandidatePartition> candidates);

}  // namespace collage
