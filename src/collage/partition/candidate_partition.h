// CandidatePartition: a sub-graph that one backend could run as one partition.
//
// Rules produce candidates; the cost layer estimates them; the search picks
// a set of disjoint candidates covering the graph. A candidate remembers the
// spec it belongs to (and through it the backend) and the rule that made it,
// so a plan can explain where each partition came from.
#pragma once

#include <memory>
#include <string>

#include "collage/partition/sub_graph.h"

namespace collage {

struct PartitionSpec;

struct CandidatePartition {
  SubGraph sub_graph;
  std::shared_ptr<const PartitionSpec> spec;
  // The rule (or combiner) that produced the candidate: "op", "conv_bias_relu", ...
  std::string rule_name;

  const std::string& spec_name() const;
  // "onednn:Conv+Relu{3,4}"
  std::string to_string() const;
};

}  // namespace collage
