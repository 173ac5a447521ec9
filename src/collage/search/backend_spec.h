// The partition spec of a backend: which candidates it offers the search.
//
// The backend's style picks the rule (DESIGN.md, "Backends"): a library
// offers each supported op and its named fused patterns; a graph runtime
// offers convex connected regions of supported ops; a fusing compiler (the
// native backend) offers regions that follow kind-based fusion rules. The
// config bounds the regions: a library call returns one tensor; graph and
// compiler regions are bounded in depth, which bounds how many candidates
// must be measured.
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
};

PartitionSpecPtr make_backend_spec(const Backend& backend, const SpecOptions& options = {});

std::vector<PartitionSpecPtr> make_backend_specs(const std::vector<const Backend*>& backends,
                                                 const SpecOptions& options = {});

}  // namespace collage
