#include "collage/plan/plan.h"

namespace collage {

std::map<std::string, int> Plan::partitions_per_backend() const {
  std::map<std::string, int> counts;
  for (const PlanPartition& partition : partitions) ++counts[partition.backend];
  return counts;
}

std::string Plan::partitions_signature() const {
  std::string text;
  for (const PlanPartition& partition : partitions) {
    text += partition.backend + ":";
    for (const std::string& node : partition.nodes) text += node + ",";
    text += ";";
  }
  return text;
}

}  // namespace collage
