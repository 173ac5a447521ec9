// PartitionSpec: one backend's say in the partitioning.
//
// Each enabled backend contributes a spec: its name, the PartitionRule that
// enumerates the sub-graphs it could run, and the SubGraphConfig those
// sub-graphs must respect. The spec also carries the backend itself so that
// the cost layer can compile and time candidates; this layer never looks at
// it, so it only needs the declaration.
//
// Candidates refer to their spec by shared pointer: a spec outlives every
// candidate made from it without the caller having to keep specs in place.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collage/partition/candidate_partition.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/partition/sub_graph.h"

namespace collage {

class Backend;
class PartitionRule;

struct PartitionSpec {
  // The backend's name ("onednn"); also the name candidates report.
  std::string name;
  std::shared_ptr<const PartitionRule> rule;
  SubGraphConfig config;
  // What a partition of this backend may grow to when the coalescer merges
  // chosen candidates. Candidates are kept small to keep measuring cheap,
  // but a graph runtime or a fusing compiler serves a region of any depth,
  // with several outputs and outputs that are also used inside; merging such
  // regions removes boundaries (and their layout round trips) the
  // candidates had to cross.
  SubGraphConfig merge_config;
  // The backend that runs this spec's partitions; null in tests of this layer.
  const Backend* backend = nullptr;
};

using PartitionSpecPtr = std::shared_ptr<const PartitionSpec>;

// `merge_config` defaults to `config`.
PartitionSpecPtr make_partition_spec(std::string name, std::shared_ptr<const PartitionRule> rule,
                                     SubGraphConfig config = {}, const Backend* backend = nullptr,
                                     std::optional<SubGraphConfig> merge_config = std::nullopt);

// The candidates of `spec`'s rule that are valid under its config, one per
// distinct inside set (the first one the rule produced).
std::vector<CandidatePartition> gather_candidates(const DataflowGraph& dfg,
                                                  const PartitionSpecPtr& spec);
// The candidates of every spec, spec by spec in the given order.
std::vector<CandidatePartition> gather_candidates(const DataflowGraph& dfg,
                                                  const std::vector<PartitionSpecPtr>& specs);

}  // namespace collage
