#include "collage/plan/plan.h"

namespace collage {

std::map<std::string, int> Plan::partitions_per_backend() const {
  std::map<std::string, int> counts;
  for (const PlanPartition& partition : partitions) ++counts[partition.backend];
  return counts;
}

}  // namespace collage
