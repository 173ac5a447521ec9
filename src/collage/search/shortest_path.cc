#include "collage/search/shortest_path.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <optional>
#include <queue>
#include <unordered_map>

#include "collage/ir/error.h"
#include "collage/partition/partition_order.h"

namespace collage {
namespace {

// The step that covers one graph input or constant for free.
constexpr std::ptrdiff_t kHostStep = -1;
constexpr std::size_t kNoParent = static_cast<std::size_t>(-1);

struct State {
  IndexSet covered;
  double seconds = 0.0;
  std::size_t parent = kNoParent;
  // The candidate that led here from `parent`, or kHostStep.
  std::ptrdiff_t step = kHostStep;
  bool expanded = false;
};

class Search {
 public:
  Search(const DataflowGraph& dfg, const std::vector<CandidatePartition>& candidates,
         CostEstimator& estimator)
      : dfg_(dfg),
        candidates_(candidates),
        estimator_(estimator),
        by_first_(dfg.size()),
        costs_(candidates.size()),
        reach_(candidates.size()),
        heap_(HeapOrder{&states_}) {
    stats_.candidates = candidates.size();
  }

  SearchResult run() {
    index_candidates();
    add_state(kNoParent, kHostStep, dfg_.empty_set(), 0.0);
    std::optional<std::size_t> goal;
    PostDfsIndex furthest = 0;
    while (!heap_.empty()) {
      auto [seconds, id] = heap_.top();
      heap_.pop();
      if (states_[id].expanded || seconds > states_[id].seconds) continue;  // stale entry
      states_[id].expanded = true;
      ++stats_.states_expanded;
      auto next = states_[id].covered.first_outside();
      if (!next) {
        goal = id;
        break;
      }
      furthest = std::max(furthest, *next);
      expand(id, *next);
    }
    stats_.states_reached = states_.size();
    if (!goal) throw_no_cover(furthest);
    return result(*goal);
  }

 private:
  struct HeapEntry {
    double seconds;
    std::size_t state;
  };
  // std::priority_queue keeps the "largest" on top, so this orders the
  // cheapest first, and among equal costs the smallest covered set.
  struct HeapOrder {
    const std::vector<State>* states;
    bool operator()(const HeapEntry& a, const HeapEntry& b) const {
      if (a.seconds != b.seconds) return a.seconds > b.seconds;
      return (*states)[a.state].covered > (*states)[b.state].covered;
    }
  };

  void index_candidates() {
    IndexSet coverable = dfg_.host_set();
    for (std::size_t c = 0; c < candidates_.size(); ++c) {
      const IndexSet& inside = candidates_[c].sub_graph.inside();
      assert(inside.size() == dfg_.size() && "find_cheapest_cover: candidate of another graph");
      auto first = inside.first_inside();
      if (!first) continue;
      by_first_[*first].push_back(c);
      coverable |= inside;
    }
    if (auto missing = coverable.first_outside()) {
      throw Error(fmt::format("no candidate partition covers {}; every operator needs at least "
                              "one (the native backend runs them all)",
                              dfg_.describe(*missing)),
                  {.node = dfg_.node(*missing).name});
    }
  }

  void expand(std::size_t id, PostDfsIndex next) {
    // Copies: add_state may grow states_ and move what references would see.
    const IndexSet covered = states_[id].covered;
    const double seconds = states_[id].seconds;
    if (dfg_.is_host(next)) {
      IndexSet grown = covered;
      grown.add(next);
      add_state(id, kHostStep, std::move(grown), seconds);
    }
    for (std::size_t c : by_first_[next]) {
      const IndexSet& inside = candidates_[c].sub_graph.inside();
      if (inside.intersects(covered)) continue;
      // The cycle test is cheap next to an estimate (a compile and a timing run).
      if (forms_cycle(id, c)) {
        ++stats_.cycles_rejected;
        continue;
      }
      const Cost& cost = cost_of(c);
      if (!cost.is_valid()) {
        ++stats_.invalid_skipped;
        continue;
      }
      add_state(id, static_cast<std::ptrdiff_t>(c), covered | inside, seconds + cost.seconds());
    }
  }

  void add_state(std::size_t parent, std::ptrdiff_t step, IndexSet covered, double seconds) {
    auto [it, inserted] = state_of_.try_emplace(covered, states_.size());
    if (inserted) {
      states_.push_back(State{std::move(covered), seconds, parent, step, false});
      heap_.push({seconds, it->second});
      return;
    }
    State& state = states_[it->second];
    if (state.expanded || seconds >= state.seconds) return;
    state.seconds = seconds;
    state.parent = parent;
    state.step = step;
    heap_.push({seconds, it->second});
  }

  const Cost& cost_of(std::size_t c) {
    if (!costs_[c]) {
      costs_[c] = estimator_.estimate(dfg_, candidates_[c]);
      ++stats_.candidates_estimated;
    }
    return *costs_[c];
  }

  // The nodes a path leaving candidate `c` can reach: its outputs and
  // everything downstream of them.
  const IndexSet& reach_of(std::size_t c) {
    if (!reach_[c]) {
      const SubGraph& sub_graph = candidates_[c].sub_graph;
      IndexSet reach = sub_graph.output();
      for (PostDfsIndex index : sub_graph.output()) reach |= dfg_.downstream_of(index);
      reach_[c] = std::move(reach);
    }
    return *reach_[c];
  }

  // Whether adding candidate `c` to the partitions on the path to state `id`
  // makes the partitions feed each other in a cycle. Nodes not yet covered
  // count as partitions of their own; whatever partitions they later join,
  // a cycle through them stays a cycle, so rejecting now loses nothing.
  bool forms_cycle(std::size_t id, std::size_t c) {
    const IndexSet& inside = candidates_[c].sub_graph.inside();
    IndexSet frontier = reach_of(c);
    // Without passing through a chosen partition, a path back into `c`
    // would make `c` itself non-convex.
    if (!frontier.intersects(states_[id].covered)) return frontier.intersects(inside);
    std::vector<std::size_t> chosen;
    for (std::size_t s = id; states_[s].parent != kNoParent; s = states_[s].parent) {
      if (states_[s].step != kHostStep) chosen.push_back(static_cast<std::size_t>(states_[s].step));
    }
    // Entering a chosen partition anywhere lets a path leave it from any of
    // its nodes: close the frontier over such jumps.
    std::vector<bool> jumped(chosen.size(), false);
    for (bool grew = true; grew;) {
      grew = false;
      for (std::size_t i = 0; i < chosen.size(); ++i) {
        if (jumped[i]) continue;
        const IndexSet& other = candidates_[chosen[i]].sub_graph.inside();
        if (!other.intersects(frontier)) continue;
        jumped[i] = true;
        frontier |= other;
        frontier |= reach_of(chosen[i]);
        grew = true;
      }
    }
    return frontier.intersects(inside);
  }

  [[noreturn]] void throw_no_cover(PostDfsIndex furthest) {
    std::string why;
    for (std::size_t c : by_first_[furthest]) {
      if (costs_[c] && !costs_[c]->is_valid()) {
        why = fmt::format(" ({}: {})", candidates_[c].to_string(), costs_[c]->reason());
        break;
      }
    }
    throw Error(fmt::format("no valid cover: every candidate that could cover {} has an invalid "
                            "cost or would form a cycle between partitions{}",
                            dfg_.describe(furthest), why),
                {.node = dfg_.is_operator(furthest) ? dfg_.node(furthest).name : std::string()});
  }

  SearchResult result(std::size_t goal) {
    std::vector<std::size_t> chosen;
    for (std::size_t s = goal; states_[s].parent != kNoParent; s = states_[s].parent) {
      if (states_[s].step != kHostStep) chosen.push_back(static_cast<std::size_t>(states_[s].step));
    }
    std::reverse(chosen.begin(), chosen.end());
    std::vector<IndexSet> insides;
    for (std::size_t c : chosen) insides.push_back(candidates_[c].sub_graph.inside());
    auto order = order_partitions(dfg_, insides);
    assert(order && "find_cheapest_cover: the search let a cycle between partitions through");

    SearchResult result;
    for (std::size_t position : *order) {
      std::size_t c = chosen[position];
      result.partitions.push_back({candidates_[c], *costs_[c]});
      result.total += *costs_[c];
    }
    result.stats = stats_;
    return result;
  }

  const DataflowGraph& dfg_;
  const std::vector<CandidatePartition>& candidates_;
  CostEstimator& estimator_;
  // Candidates by their smallest inside index.
  std::vector<std::vector<std::size_t>> by_first_;
  std::vector<std::optional<Cost>> costs_;
  std::vector<std::optional<IndexSet>> reach_;
  std::vector<State> states_;
  std::unordered_map<IndexSet, std::size_t> state_of_;
  std::priority_queue<HeapEntry, std::vector<HeapEntry>, HeapOrder> heap_;
  SearchStats stats_;
};

}  // namespace

SearchResult find_cheapest_cover(const DataflowGraph& dfg,
                                 const std::vector<CandidatePartition>& candidates,
                                 CostEstimator& estimator) {
  return Search(dfg, candidates, estimator).run();
}

Cost total_cost(const std::vector<ChosenPartition>& partitions) {
  Cost total = Cost::zero();
  for (const ChosenPartition& partition : partitions) total += partition.cost;
  return total;
}

}  // namespace collage
