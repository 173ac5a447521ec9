#include "collage/partition/partition_order.h"

#include <cassert>
#include <queue>
#include <set>

namespace collage {

std::optional<std::vector<std::size_t>> order_partitions(const DataflowGraph& dfg,
                                                         const std::vector<IndexSet>& partitions) {
  // Groups: one per partition, then one per index outside every partition.
  const std::size_t count = partitions.size();
  std::vector<std::size_t> group(dfg.size(), 0);
  std::vector<bool> placed(dfg.size(), false);
  for (std::size_t p = 0; p < count; ++p) {
    for (PostDfsIndex index : partitions[p]) {
      assert(!placed[index] && "order_partitions: partitions overlap");
      placed[index] = true;
      group[index] = p;
    }
  }
  std::size_t groups = count;
  std::vector<PostDfsIndex> smallest;
  for (std::size_t p = 0; p < count; ++p) {
    smallest.push_back(partitions[p].first_inside().value_or(dfg.size()));
  }
  for (PostDfsIndex index = 0; index < dfg.size(); ++index) {
    if (placed[index]) continue;
    group[index] = groups++;
    smallest.push_back(index);
  }

  std::vector<std::set<std::size_t>> successors(groups);
  std::vector<std::size_t> missing(groups, 0);
  for (PostDfsIndex index = 0; index < dfg.size(); ++index) {
    for (PostDfsIndex user : dfg.users(index)) {
      std::size_t from = group[index];
      std::size_t to = group[user];
      if (from == to) continue;
      if (successors[from].insert(to).second) ++missing[to];
    }
  }

  // Kahn's algorithm, smallest index first among ready groups.
  using Ready = std::pair<PostDfsIndex, std::size_t>;
  std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
  for (std::size_t g = 0; g < groups; ++g) {
    if (missing[g] == 0) ready.emplace(smallest[g], g);
  }
  std::vector<std::size_t> order;
  std::size_t done = 0;
  while (!ready.empty()) {
    std::size_t g = ready.top().second;
    ready.pop();
    ++done;
    if (g < count) order.push_back(g);
    for (std::size_t next : successors[g]) {
      if (--missing[next] == 0) ready.emplace(smallest[next], next);
    }
  }
  if (done != groups) return std::nullopt;
  return order;
}

bool partitions_form_cycle(const DataflowGraph& dfg, const std::vector<IndexSet>& partitions) {
  return !order_partitions(dfg, partitions).has_value();
}

}  // namespace collage
