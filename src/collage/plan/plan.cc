#include "collage/plan/plan.h"

namespace collage {

std::map<std::string, int> Plan::partitions_per_backend() const {
  std::map<std::string, int> counts;
  for (const PlanPartition& partition : partitions) ++counts[partition.backend];
  return counts;
}

std::string Plan::partitions_per_backend_text() const {
  std::string text;
  for (const auto& [backend, count] : partitions_per_backend()) {
    text += (text.empty() ? "" : ", ") + backend + " " + std::to_string(count);
  }
  return text;
}

std::string Plan::partitions_signature() const {
  std::string text;
  for (const PlanPartition& partition : partitions) {
    text += partition.backend + ":";
    for (const std::string& node : partition.nodes) text += node + ",";
    text += ";";
  }
  for (const auto& [backend, layout] : compute_layouts) text += backend + "@" + layout + ";";
  for (const PlanBody& body : bodies) {
    text += "{" + body.node + "#" + std::to_string(body.index) + ":" +
            body.plan.partitions_signature() + "}";
  }
  return text;
}

std::string Plan::label() const {
  const std::string name =
      search.layout.empty() || strategy != "collage" ? strategy : strategy + "@" + search.layout;
  if (compute_layouts.empty()) return name;
  std::string text = name + " [";
  for (auto it = compute_layouts.begin(); it != compute_layouts.end(); ++it) {
    if (it != compute_layouts.begin()) text += ",";
    text += it->first + ":" + it->second;
  }
  return text + "]";
}

std::optional<std::pair<std::size_t, std::size_t>> first_repeated_shapes(
    const std::vector<std::map<std::string, Shape>>& sets) {
  for (std::size_t i = 0; i < sets.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (sets[j] == sets[i]) return std::make_pair(j, i);
    }
  }
  return std::nullopt;
}

}  // namespace collage
