// The partition spec of a backend: which candidates it offers the search.
//
// The backend's style picks the rule (docs/partitioning.md, "Candidates"): a library
// offers each supported op and its named fused patterns; a graph runtime
// offers convex connected regions of supported ops; a fusing compiler (the
// native backend) offers regions that follow kind-based fusion rules. The
// config bounds the candidates: a library call returns one tensor; graph and
// compiler candidates are bounded in depth and exits, which bounds how many
// must be measured. Chosen graph and compiler partitions may then be merged
// into regions of any shape (PartitionSpec::merge_config).
#pragma once

#include <cstddef>
#include <vector>

#include "collage/backends/backend.h"
#include "collage/partition/partition_spec.h"

namespace collage {

struct SpecOptions {
  // Longest path inside a graph-style or fusing-compiler candidate.
  std::size_t graph_max_depth = 6;
  std::size_t compiler_max_depth = 6;
  // Most exit nodes of a graph-style or fusing-compiler candidate. Library
  // calls return one tensor, so library candidates always have one.
  std::size_t max_exits = 1;
  // Whether graph-style and compiler partitions grow, when coalesced, past
  // the candidates' limits: any depth, several outputs, outputs also used
  // inside (the backends of these styles compile any convex region).
  bool unbounded_merges = true;
};

PartitionSpecPtr make_backend_spec(const Backend& backend, const SpecOptions& options = {});

std::vector<PartitionSpecPtr> make_backend_specs(const std::vector<const Backend*>& backends,
                                                 const SpecOptions& options = {});

}  // namespace collage
