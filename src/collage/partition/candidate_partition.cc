#include "collage/partition/candidate_partition.h"

#include <cassert>

#include "collage/partition/partition_spec.h"

namespace collage {

const std::string& CandidatePartition::spec_name() const {
  assert(spec && "CandidatePartition: no spec");
  return spec->name;
}

std::string CandidatePartition::to_string() const {
  return spec_name() + ":" + sub_graph.to_string();
}

}  // namespace collage
