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
  for (const auto& [backend, layout] : compute_layouts) text += backend + "@" + layout + ";";
  return text;
}

std::string Plan::label() const {
  if (compute_layouts.empty()) return strategy;
  std::string text = strategy + " [";
  for (auto it = compute_layouts.begin(); it != compute_layouts.end(); ++it) {
    if (it != compute_layouts.begin()) text += ",";
    text += it->first + ":" + it->second;
  }
  return text + "]";
}

}  // namespace collage
