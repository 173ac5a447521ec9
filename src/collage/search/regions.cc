#include "collage/search/regions.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_set>

#include "collage/backends/backend.h"
#include "collage/backends/compiles_ahead.h"
#include "collage/ir/error.h"
#include "collage/partition/partition_order.h"
#include "collage/partition/partition_spec.h"
#include "collage/search/strategy.h"

namespace collage {
namespace {

// Partitions of one spec grown into one region: the indices of its members
// in the cover, in execution order, and their union.
struct Region {
  std::vector<std::size_t> members;
  SubGraph sub_graph;
};

bool same_spec_touching(const std::vector<ChosenPartition>& cover, const Region& a,
                        const Region& b) {
  return cover[a.members.front()].candidate.spec_name() ==
             cover[b.members.front()].candidate.spec_name() &&
         a.sub_graph.touches(b.sub_graph);
}

// The union of `regions[a]` and `regions[b]` (of one spec, touching) when
// it is valid under region_config and leaves no cycle among
// `regions` and the cover's partitions from `next` on (not yet in a region).
std::optional<SubGraph> merged(const DataflowGraph& dfg, const std::vector<ChosenPartition>& cover,
                               const std::vector<Region>& regions, std::size_t a, std::size_t b,
                               std::size_t next) {
  SubGraph both = regions[a].sub_graph.disjoint_union(dfg, regions[b].sub_graph);
  const PartitionSpec& spec = *cover[regions[a].members.front()].candidate.spec;
  if (!both.is_valid(dfg, region_config(spec))) return std::nullopt;
  std::vector<IndexSet> after;
  for (std::size_t r = 0; r < regions.size(); ++r) {
    if (r != a && r != b) after.push_back(regions[r].sub_graph.inside());
  }
  after.push_back(both.inside());
  for (std::size_t p = next; p < cover.size(); ++p)
    after.push_back(cover[p].candidate.sub_graph.inside());
  if (partitions_form_cycle(dfg, after)) return std::nullopt;
  return both;
}

// Joins region `b` into region `a` (whose union is `both`) and drops `b`.
void join(std::vector<Region>& regions, std::size_t a, std::size_t b, SubGraph both) {
  Region& into = regions[a];
  into.members.insert(into.members.end(), regions[b].members.begin(), regions[b].members.end());
  std::sort(into.members.begin(), into.members.end());
  into.sub_graph = std::move(both);
  regions.erase(regions.begin() + static_cast<std::ptrdiff_t>(b));
}

// Grows regions over the cover in execution order: each partition joins the
// latest region it can, then regions that now touch are joined, until none can.
std::vector<Region> grow_regions(const DataflowGraph& dfg,
                                 const std::vector<ChosenPartition>& cover) {
  std::vector<Region> regions;
  for (std::size_t p = 0; p < cover.size(); ++p) {
    regions.push_back(Region{{p}, cover[p].candidate.sub_graph});
    std::size_t last = regions.size() - 1;
    for (std::size_t r = last; r-- > 0;) {
      if (!same_spec_touching(cover, regions[r], regions[last])) continue;
      if (auto both = merged(dfg, cover, regions, r, last, p + 1)) {
        join(regions, r, last, std::move(*both));
        break;
      }
    }
  }
  std::unordered_set<IndexSet> refused;
  for (bool joined = true; joined;) {
    joined = false;
    for (std::size_t a = 0; a < regions.size() && !joined; ++a) {
      for (std::size_t b = a + 1; b < regions.size() && !joined; ++b) {
        if (!same_spec_touching(cover, regions[a], regions[b])) continue;
        IndexSet inside = regions[a].sub_graph.inside() | regions[b].sub_graph.inside();
        if (refused.count(inside)) continue;
        if (auto both = merged(dfg, cover, regions, a, b, cover.size())) {
          join(regions, a, b, std::move(*both));
          joined = true;
        } else {
          refused.insert(std::move(inside));
        }
      }
    }
  }
  return regions;
}

// `members` of the cover as regions its backend compiles: all of them as one
// when that compiles (or it is one partition of the cover), else each half so.
// `members` of the cover joined as one sub-graph.
SubGraph joined(const DataflowGraph& dfg, const std::vector<ChosenPartition>& cover,
                const std::vector<std::size_t>& members) {
  SubGraph sub_graph = cover[members.front()].candidate.sub_graph;
  for (std::size_t i = 1; i < members.size(); ++i)
    sub_graph = sub_graph.disjoint_union(dfg, cover[members[i]].candidate.sub_graph);
  return SubGraph(dfg, sub_graph.inside(),
                  "region of " + std::to_string(sub_graph.operator_count(dfg)) + " ops");
}

void add_compiled(const DataflowGraph& dfg, const std::vector<ChosenPartition>& cover,
                  const std::vector<std::size_t>& members, std::vector<ChosenPartition>& out) {
  const ChosenPartition& first = cover[members.front()];
  if (members.size() == 1) {
    out.push_back(first);
    return;
  }
  SubGraph sub_graph = joined(dfg, cover, members);
  const PartitionSpec& spec = *first.candidate.spec;
  if (sub_graph.is_valid(dfg, region_config(spec)) && spec_compiles(dfg, spec, sub_graph)) {
    out.push_back(ChosenPartition{
        CandidatePartition{std::move(sub_graph), first.candidate.spec, "region"}, Cost::zero()});
    return;
  }
  auto middle = members.begin() + static_cast<std::ptrdiff_t>(members.size() / 2);
  add_compiled(dfg, cover, {members.begin(), middle}, out);
  add_compiled(dfg, cover, {middle, members.end()}, out);
}

}  // namespace

SubGraphConfig region_config(const PartitionSpec& spec) {
  if (spec.backend == nullptr || !spec.backend->compiles_regions()) return spec.merge_config;
  return SubGraphConfig{.allow_taps = true};
}

std::vector<ChosenPartition> merge_into_regions(const DataflowGraph& dfg,
                                                const std::vector<ChosenPartition>& partitions) {
  std::vector<ChosenPartition> out;
  const std::vector<Region> regions = grow_regions(dfg, partitions);
  // Backends that compile ahead first compile their regions on all cores;
  // add_compiled then finds them compiled.
  std::map<const Backend*, std::vector<Graph>> ahead;
  for (const Region& region : regions) {
    const Backend* backend = partitions[region.members.front()].candidate.spec->backend;
    if (region.members.size() < 2 || backend == nullptr || compiles_ahead(*backend) == nullptr) {
      continue;
    }
    SubGraph sub_graph = joined(dfg, partitions, region.members);
    const PartitionSpec& spec = *partitions[region.members.front()].candidate.spec;
    if (sub_graph.is_valid(dfg, region_config(spec))) {
      ahead[backend].push_back(sub_graph.extract(dfg));
    }
  }
  for (const auto& [backend, graphs] : ahead) {
    compiles_ahead(*backend)->prepare(graphs, CompileOptions{});
  }
  for (const Region& region : regions) add_compiled(dfg, partitions, region.members, out);
  auto ordered = in_execution_order(dfg, std::move(out));
  if (!ordered) throw Error("merging partitions into regions formed a cycle between them");
  return std::move(*ordered);
}

}  // namespace collage
