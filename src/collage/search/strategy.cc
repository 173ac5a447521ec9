#include "collage/search/strategy.h"

#include <algorithm>

#include "collage/backends/backend.h"
#include "collage/backends/compiles_ahead.h"
#include "collage/ir/error.h"
#include "collage/ir/split.h"
#include "collage/partition/partition_order.h"

namespace collage {
namespace {

// Takes `spec`'s candidates, largest first, wherever they fit and compile.
void take_largest(const DataflowGraph& dfg, const PartitionSpecPtr& spec, IndexSet& covered,
                  std::vector<ChosenPartition>& chosen, std::vector<IndexSet>& chosen_sets) {
  std::vector<CandidatePartition> candidates = gather_candidates(dfg, spec);
  std::vector<IndexSet> operators;
  for (const CandidatePartition& c : candidates)
    operators.push_back(operator_set(dfg, c.sub_graph));
  std::vector<std::size_t> order(candidates.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    std::size_t size_a = operators[a].popcount();
    std::size_t size_b = operators[b].popcount();
    if (size_a != size_b) return size_a > size_b;
    return operators[a] < operators[b];
  });
  // A backend that compiles ahead (one kernel per second or more) first
  // compiles, on all cores, the candidates the loop below will take if all
  // of them compile; the loop then finds them compiled.
  if (spec->backend != nullptr && compiles_ahead(*spec->backend) != nullptr) {
    IndexSet taken = covered;
    std::vector<IndexSet> sets = chosen_sets;
    std::vector<Graph> graphs;
    for (std::size_t i : order) {
      if (operators[i].popcount() == 0 || operators[i].intersects(taken)) continue;
      sets.push_back(operators[i]);
      if (partitions_form_cycle(dfg, sets)) {
        sets.pop_back();
        continue;
      }
      taken |= operators[i];
      graphs.push_back(candidates[i].sub_graph.extract(dfg));
    }
    compiles_ahead(*spec->backend)->prepare(graphs, CompileOptions{});
  }
  for (std::size_t i : order) {
    if (operators[i].popcount() == 0 || operators[i].intersects(covered)) continue;
    chosen_sets.push_back(operators[i]);
    if (partitions_form_cycle(dfg, chosen_sets) ||
        !spec_compiles(dfg, *spec, candidates[i].sub_graph)) {
      chosen_sets.pop_back();
      continue;
    }
    covered |= operators[i];
    chosen.push_back(ChosenPartition{candidates[i], Cost::zero()});
  }
}

}  // namespace

Strategy Strategy::parse(const std::string& text) {
  Strategy strategy;
  if (text == "native") return strategy;
  if (text == "collage") {
    strategy.kind = Kind::kCollage;
    return strategy;
  }
  auto colon = text.find(':');
  std::string head = text.substr(0, colon);
  if (colon != std::string::npos && (head == "single" || head == "greedy")) {
    strategy.kind = head == "single" ? Kind::kSingle : Kind::kGreedy;
    strategy.backends = split_backend_names(text.substr(colon + 1));
    if (strategy.kind == Kind::kSingle && strategy.backends.size() == 1) return strategy;
    if (strategy.kind == Kind::kGreedy && !strategy.backends.empty()) return strategy;
  }
  throw Error("unknown strategy '" + text +
              "' (expected native, single:<backend>, greedy:<b1>,<b2>,... or collage)");
}

std::string Strategy::to_string() const {
  switch (kind) {
    case Kind::kNative:
      return "native";
    case Kind::kCollage:
      return "collage";
    case Kind::kSingle:
      return "single:" + backends.front();
    case Kind::kGreedy: {
      std::string text = "greedy:";
      for (std::size_t i = 0; i < backends.size(); ++i) text += (i ? "," : "") + backends[i];
      return text;
    }
  }
  return "?";
}

std::vector<std::string> split_backend_names(const std::string& text) {
  return split_nonempty(text, ',');
}

bool spec_compiles(const DataflowGraph& dfg, const PartitionSpec& spec, const SubGraph& sub_graph) {
  if (spec.backend == nullptr) return true;
  return spec.backend->compile(sub_graph.extract(dfg), CompileOptions{}).ok();
}

IndexSet operator_set(const DataflowGraph& dfg, const SubGraph& sub_graph) {
  return sub_graph.inside() - dfg.host_set();
}

std::vector<ChosenPartition> greedy_cover(const DataflowGraph& dfg,
                                          const std::vector<PartitionSpecPtr>& priority,
                                          const PartitionSpecPtr& fallback) {
  IndexSet covered = dfg.empty_set();
  std::vector<ChosenPartition> chosen;
  std::vector<IndexSet> chosen_sets;
  for (const PartitionSpecPtr& spec : priority)
    take_largest(dfg, spec, covered, chosen, chosen_sets);
  take_largest(dfg, fallback, covered, chosen, chosen_sets);

  IndexSet operators = IndexSet::all(dfg.size()) - dfg.host_set();
  if (auto missing = (operators - covered).first_inside()) {
    throw Error("no backend can run this node (not even " + fallback->name + ")",
                {.node = dfg.node(*missing).name});
  }
  auto order = order_partitions(dfg, chosen_sets);
  if (!order) throw Error("greedy placement formed a cycle between partitions");
  std::vector<ChosenPartition> ordered;
  for (std::size_t i : *order) ordered.push_back(chosen[i]);
  return ordered;
}

}  // namespace collage
