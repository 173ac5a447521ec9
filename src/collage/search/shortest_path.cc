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
// A frontier entry's owner number: the spec's number in the low 20 bits,
// the owner's edge class above them.
constexpr int kEdgeClassShift = 20;
constexpr std::uint32_t kSpecMask = (1u << kEdgeClassShift) - 1;
constexpr std::size_t kNoParent = static_cast<std::size_t>(-1);

// What a state is: the covered set; when boundaries are charged, which
// backend covers each covered operator next to an uncovered one (as pairs
// of index and spec number, with the edge class of the partition that
// covers it: the layout a follower computes in); and the partitions on the
// route that join nodes the graph does not connect (`joins`, see
// joins_unrelated()). Later charges and cycle tests depend on nothing
// else, so two routes to one covered set that could differ later stay
// apart.
struct StateKey {
  IndexSet covered;
  std::vector<std::uint32_t> frontier;
  std::vector<std::uint32_t> joins;
  bool operator==(const StateKey&) const = default;
};

struct StateKeyHash {
  std::size_t operator()(const StateKey& key) const {
    std::size_t hash = std::hash<IndexSet>{}(key.covered);
    for (std::uint32_t v : key.frontier) hash = hash * 1000003u ^ v;
    for (std::uint32_t v : key.joins) hash = hash * 1000033u ^ v;
    return hash;
  }
};

struct State {
  IndexSet covered;
  std::vector<std::uint32_t> frontier;
  // The route's partitions that join unrelated nodes, each as the number of
  // the first candidate with its inside set, ascending.
  std::vector<std::uint32_t> joins;
  double seconds = 0.0;
  std::size_t parent = kNoParent;
  // The candidate that led here from `parent`, or kHostStep.
  std::ptrdiff_t step = kHostStep;
  bool expanded = false;
};

// A value crossing the boundary of a partition `inside`, given `owner`
// (owner[i]: the partition covering operator i, or -1 when none does yet).
// Into the partition: `producer` is outside, a graph input or constant
// (`other` -1) or an operator of partition `other`. Out of it: `producer`
// is inside and feeds partition `other`, or (`other` -1) is a graph output.
struct Crossing {
  PostDfsIndex producer;
  std::ptrdiff_t other;
  bool into;
};

// Each crossing once; producers outside that no partition covers yet are
// left out.
std::vector<Crossing> crossings(const DataflowGraph& dfg, const IndexSet& inside,
                                const std::vector<std::ptrdiff_t>& owner) {
  std::vector<Crossing> result;
  auto add = [&](Crossing crossing) {
    for (const Crossing& seen : result) {
      if (seen.producer == crossing.producer && seen.other == crossing.other &&
          seen.into == crossing.into) {
        return;
      }
    }
    result.push_back(crossing);
  };
  for (PostDfsIndex i : inside) {
    if (!dfg.is_operator(i)) continue;
    for (PostDfsIndex j : dfg.inputs(i)) {
      if (inside.contains(j)) continue;
      if (dfg.is_host(j)) {
        add({j, -1, true});
      } else if (owner[j] >= 0) {
        add({j, owner[j], true});
      }
    }
    for (PostDfsIndex k : dfg.users(i)) {
      if (!inside.contains(k) && owner[k] >= 0) add({i, owner[k], false});
    }
    if (dfg.is_graph_output(i)) add({i, -1, false});
  }
  return result;
}

class Search {
 public:
  Search(const DataflowGraph& dfg, const std::vector<CandidatePartition>& candidates,
         CostEstimator& estimator, BoundaryCosts* boundaries)
      : dfg_(dfg),
        candidates_(candidates),
        estimator_(estimator),
        boundaries_(boundaries),
        by_first_(dfg.size()),
        costs_(candidates.size()),
        reach_(candidates.size()),
        join_id_(candidates.size(), kJoinsNothing),
        heap_(HeapOrder{&states_}) {
    stats_.candidates = candidates.size();
  }

  SearchResult run() {
    index_candidates();
    add_state(kNoParent, kHostStep, dfg_.empty_set(), {}, {}, 0.0);
    std::optional<std::size_t> goal;
    PostDfsIndex furthest = 0;
    while (!heap_.empty()) {
      auto [seconds, id] = heap_.top();
      heap_.pop();
      if (states_[id].expanded || seconds > states_[id].seconds) continue;  // stale entry
      states_[id].expanded = true;
      // States leave the heap cheapest first: the first kMaxRoutesPerCover
      // routes to a covered set are its cheapest.
      if (boundaries_ && !on_one_backend(states_[id].frontier) &&
          ++routes_[states_[id].covered] > kMaxRoutesPerCover) {
        ++stats_.routes_dropped;
        continue;
      }
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
      const State& x = (*states)[a.state];
      const State& y = (*states)[b.state];
      if (x.covered != y.covered) return x.covered > y.covered;
      if (x.frontier != y.frontier) return x.frontier > y.frontier;
      return x.joins > y.joins;
    }
  };

  void index_candidates() {
    IndexSet coverable = dfg_.host_set();
    std::unordered_map<IndexSet, std::uint32_t> first_with_inside;
    for (std::size_t c = 0; c < candidates_.size(); ++c) {
      const IndexSet& inside = candidates_[c].sub_graph.inside();
      assert(inside.size() == dfg_.size() && "find_cheapest_cover: candidate of another graph");
      auto first = inside.first_inside();
      if (!first) continue;
      by_first_[*first].push_back(c);
      coverable |= inside;
      if (joins_unrelated(candidates_[c].sub_graph)) {
        join_id_[c] =
            first_with_inside.try_emplace(inside, static_cast<std::uint32_t>(c)).first->second;
      }
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
    const std::vector<std::uint32_t> joins = states_[id].joins;
    const double seconds = states_[id].seconds;
    if (boundaries_) owners_of_path(id);
    if (dfg_.is_host(next)) {
      IndexSet grown = covered;
      grown.add(next);
      std::vector<std::uint32_t> frontier =
          boundaries_ ? frontier_of(grown, kHostStep) : std::vector<std::uint32_t>{};
      add_state(id, kHostStep, std::move(grown), std::move(frontier), joins, seconds);
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
      double boundary = 0.0;
      IndexSet grown = covered | inside;
      std::vector<std::uint32_t> frontier;
      if (boundaries_) {
        boundary = boundary_seconds(c);
        frontier = frontier_of(grown, static_cast<std::ptrdiff_t>(c));
      }
      std::vector<std::uint32_t> grown_joins = joins;
      if (join_id_[c] != kJoinsNothing) {
        grown_joins.insert(std::upper_bound(grown_joins.begin(), grown_joins.end(), join_id_[c]),
                           join_id_[c]);
      }
      add_state(id, static_cast<std::ptrdiff_t>(c), std::move(grown), std::move(frontier),
                std::move(grown_joins), seconds + cost.seconds() + boundary);
    }
  }

  // The frontier of a state covering `covered`, reached from the expanded
  // state (owner_) by `step`: each covered operator with an uncovered
  // producer or user, with the number of its owner's spec and its owner's
  // edge class (BoundaryCosts::edge_class: a follower's layout).
  std::vector<std::uint32_t> frontier_of(const IndexSet& covered, std::ptrdiff_t step) {
    std::vector<std::uint32_t> frontier;
    const IndexSet* added = step == kHostStep
                                ? nullptr
                                : &candidates_[static_cast<std::size_t>(step)].sub_graph.inside();
    const PlacedOperators placement = path_with(step);
    // Each owner's number, worked out once per frontier.
    std::vector<std::pair<std::ptrdiff_t, std::uint32_t>> numbers;
    auto number_of = [&](std::ptrdiff_t owner) {
      for (const auto& [known, number] : numbers) {
        if (known == owner) return number;
      }
      const CandidatePartition& candidate = candidates_[static_cast<std::size_t>(owner)];
      const std::uint32_t edge_class = boundaries_->edge_class(
          dfg_, candidate.spec_name(), candidate.sub_graph.inside(), placement);
      const std::uint32_t spec = spec_number(static_cast<std::size_t>(owner));
      assert(spec <= kSpecMask && edge_class < (1u << (32 - kEdgeClassShift)));
      const std::uint32_t number = spec | edge_class << kEdgeClassShift;
      numbers.emplace_back(owner, number);
      return number;
    };
    for (PostDfsIndex i : covered) {
      if (!dfg_.is_operator(i)) continue;
      bool borders = false;
      for (PostDfsIndex j : dfg_.inputs(i)) borders |= !covered.contains(j);
      for (PostDfsIndex k : dfg_.users(i)) borders |= !covered.contains(k);
      if (!borders) continue;
      const std::ptrdiff_t owner = added && added->contains(i) ? step : owner_[i];
      frontier.push_back(static_cast<std::uint32_t>(i));
      frontier.push_back(owner < 0 ? 0u : number_of(owner));
    }
    return frontier;
  }

  // Where the path to the expanded state (owner_) places each operator,
  // with candidate `step` placed too (kHostStep: none).
  PlacedOperators path_with(std::ptrdiff_t step) const {
    return [this, step](PostDfsIndex i) -> std::optional<PlacedPartition> {
      std::ptrdiff_t owner = owner_[i];
      if (step != kHostStep &&
          candidates_[static_cast<std::size_t>(step)].sub_graph.inside().contains(i)) {
        owner = step;
      }
      if (owner < 0) return std::nullopt;
      const CandidatePartition& placed = candidates_[static_cast<std::size_t>(owner)];
      return PlacedPartition{placed.spec_name(), &placed.sub_graph.inside()};
    };
  }

  // Whether every operator of `frontier` is on one backend, its partitions
  // all of one edge class. A covered set fixes which operators its frontier
  // holds, so it has at most one such frontier per backend and class: these
  // routes, which pay little or nothing later if the rest stays on their
  // backend, are never capped (the cheapest routes so far can be the ones
  // whose boundaries are still to be paid). Frontiers of one backend in
  // mixed classes (followers in several layouts) are capped like any other:
  // exempt, k branches could make 2^k of them.
  static bool on_one_backend(const std::vector<std::uint32_t>& frontier) {
    for (std::size_t k = 3; k < frontier.size(); k += 2) {
      if (frontier[k] != frontier[1]) return false;
    }
    return true;
  }

  std::uint32_t spec_number(std::size_t c) {
    auto [it, inserted] = spec_numbers_.try_emplace(
        candidates_[c].spec_name(), static_cast<std::uint32_t>(spec_numbers_.size() + 1));
    return it->second;
  }

  // owner_[i]: the candidate on the path to state `id` that covers operator
  // i, or -1.
  void owners_of_path(std::size_t id) {
    owner_.assign(dfg_.size(), -1);
    for (std::size_t s = id; states_[s].parent != kNoParent; s = states_[s].parent) {
      if (states_[s].step == kHostStep) continue;
      for (PostDfsIndex i :
           candidates_[static_cast<std::size_t>(states_[s].step)].sub_graph.inside()) {
        owner_[i] = states_[s].step;
      }
    }
  }

  // The conversions candidate `c` brings: at its boundaries with partitions
  // already placed (owner_); graph inputs and outputs charge nothing.
  double boundary_seconds(std::size_t c) {
    const CandidatePartition& candidate = candidates_[c];
    const IndexSet& inside = candidate.sub_graph.inside();
    const std::string& name = candidate.spec_name();
    const PlacedOperators placement = path_with(static_cast<std::ptrdiff_t>(c));
    double total = 0;
    for (const Crossing& crossing : crossings(dfg_, inside, owner_)) {
      const CandidatePartition* other =
          crossing.other < 0 ? nullptr : &candidates_[static_cast<std::size_t>(crossing.other)];
      const std::string other_name = other ? other->spec_name() : std::string();
      const BoundaryCharge charge =
          crossing.into ? boundaries_->charge(dfg_, crossing.producer, other_name,
                                              other ? &other->sub_graph.inside() : nullptr, &inside,
                                              name, &placement)
                        : boundaries_->charge(dfg_, crossing.producer, name, &inside,
                                              other ? &other->sub_graph.inside() : nullptr,
                                              other_name, &placement);
      total += charge.total();
    }
    return total;
  }

  void add_state(std::size_t parent, std::ptrdiff_t step, IndexSet covered,
                 std::vector<std::uint32_t> frontier, std::vector<std::uint32_t> joins,
                 double seconds) {
    if (boundaries_ && !on_one_backend(frontier)) {
      auto routes = routes_.find(covered);
      if (routes != routes_.end() && routes->second >= kMaxRoutesPerCover) return;
    }
    auto [it, inserted] = state_of_.try_emplace(StateKey{covered, frontier, joins}, states_.size());
    if (inserted) {
      states_.push_back(State{std::move(covered), std::move(frontier), std::move(joins), seconds,
                              parent, step, false});
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

  // Whether a path that enters `sub_graph` at an entry (from an operator
  // outside) can leave it by an exit that the graph does not lead to from
  // that entry: a partition of two branches side by side, or of a node and
  // an unrelated one. Only such a partition lets paths through the chosen
  // partitions reach nodes that paths through the graph cannot, so only
  // such partitions can close a cycle with a later convex candidate.
  bool joins_unrelated(const SubGraph& sub_graph) const {
    for (PostDfsIndex entry : sub_graph.entry()) {
      bool entered = false;
      for (PostDfsIndex producer : dfg_.inputs(entry)) {
        entered |= !sub_graph.inside().contains(producer) && dfg_.is_operator(producer);
      }
      if (!entered) continue;
      for (PostDfsIndex exit : sub_graph.exit()) {
        if (exit != entry && !dfg_.downstream_of(entry).contains(exit)) return true;
      }
    }
    return false;
  }

  // Whether adding candidate `c` to the partitions on the path to state `id`
  // makes the partitions feed each other in a cycle. Nodes not yet covered
  // count as partitions of their own; whatever partitions they later join,
  // a cycle through them stays a cycle, so rejecting now loses nothing.
  //
  // A path enters a chosen partition at an entry and may leave it from any
  // exit. Where the graph leads from that entry to every exit, the jump
  // reaches nothing a path through the graph would not, so only the route's
  // partitions that join unrelated nodes (the state's `joins`) are jumped
  // through; the test then depends on the state alone, and keeping the
  // cheapest route to each state loses no cover a dearer route to it would
  // have allowed.
  bool forms_cycle(std::size_t id, std::size_t c) {
    const IndexSet& inside = candidates_[c].sub_graph.inside();
    IndexSet frontier = reach_of(c);
    // Without passing through a chosen partition, a path back into `c`
    // would make `c` itself non-convex.
    if (!frontier.intersects(states_[id].covered)) return frontier.intersects(inside);
    std::vector<std::size_t> chosen(states_[id].joins.begin(), states_[id].joins.end());
    // Entering such a partition anywhere lets a path leave it from any of
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
  BoundaryCosts* boundaries_;
  std::vector<std::ptrdiff_t> owner_;
  // Candidates by their smallest inside index.
  std::vector<std::vector<std::size_t>> by_first_;
  std::vector<std::optional<Cost>> costs_;
  std::vector<std::optional<IndexSet>> reach_;
  // Per candidate: the number of the first candidate with its inside set
  // when it joins unrelated nodes (joins_unrelated), else kJoinsNothing.
  static constexpr std::uint32_t kJoinsNothing = static_cast<std::uint32_t>(-1);
  std::vector<std::uint32_t> join_id_;
  std::vector<State> states_;
  std::unordered_map<StateKey, std::size_t, StateKeyHash> state_of_;
  // Routes taken off the heap per covered set (boundaries charged only).
  std::unordered_map<IndexSet, int> routes_;
  std::unordered_map<std::string, std::uint32_t> spec_numbers_;
  std::priority_queue<HeapEntry, std::vector<HeapEntry>, HeapOrder> heap_;
  SearchStats stats_;
};

}  // namespace

SearchResult find_cheapest_cover(const DataflowGraph& dfg,
                                 const std::vector<CandidatePartition>& candidates,
                                 CostEstimator& estimator, BoundaryCosts* boundaries) {
  return Search(dfg, candidates, estimator, boundaries).run();
}

void charge_boundaries(const DataflowGraph& dfg, std::vector<ChosenPartition>& partitions,
                       BoundaryCosts& boundaries) {
  std::vector<std::ptrdiff_t> owner(dfg.size(), -1);
  for (std::size_t p = 0; p < partitions.size(); ++p) {
    for (PostDfsIndex i : partitions[p].candidate.sub_graph.inside()) {
      owner[i] = static_cast<std::ptrdiff_t>(p);
    }
  }
  const PlacedOperators placement = [&](PostDfsIndex i) -> std::optional<PlacedPartition> {
    if (owner[i] < 0) return std::nullopt;
    const CandidatePartition& placed = partitions[static_cast<std::size_t>(owner[i])].candidate;
    return PlacedPartition{placed.spec_name(), &placed.sub_graph.inside()};
  };
  std::vector<double> extra(partitions.size(), 0.0);
  for (std::size_t p = 0; p < partitions.size(); ++p) {
    const CandidatePartition& partition = partitions[p].candidate;
    const IndexSet& inside = partition.sub_graph.inside();
    for (const Crossing& crossing : crossings(dfg, inside, owner)) {
      if (!crossing.into) {
        // Into another partition: counted there, as that one's input.
        if (crossing.other >= 0) continue;
        extra[p] += boundaries
                        .charge(dfg, crossing.producer, partition.spec_name(), &inside, nullptr, "",
                                &placement)
                        .producer_seconds;
        continue;
      }
      const auto from = static_cast<std::size_t>(crossing.other);
      const std::string from_name =
          crossing.other < 0 ? std::string() : partitions[from].candidate.spec_name();
      BoundaryCharge charge = boundaries.charge(
          dfg, crossing.producer, from_name,
          crossing.other < 0 ? nullptr : &partitions[from].candidate.sub_graph.inside(), &inside,
          partition.spec_name(), &placement);
      extra[p] += charge.consumer_seconds;
      if (crossing.other >= 0) extra[from] += charge.producer_seconds;
    }
  }
  for (std::size_t p = 0; p < partitions.size(); ++p) {
    if (extra[p] > 0 && partitions[p].cost.is_valid()) {
      partitions[p].cost = partitions[p].cost + Cost::value(extra[p]);
    }
  }
}

Cost total_cost(const std::vector<ChosenPartition>& partitions) {
  Cost total = Cost::zero();
  for (const ChosenPartition& partition : partitions) total += partition.cost;
  return total;
}

std::optional<std::vector<ChosenPartition>> in_execution_order(
    const DataflowGraph& dfg, std::vector<ChosenPartition> partitions) {
  std::vector<IndexSet> insides;
  insides.reserve(partitions.size());
  for (const ChosenPartition& p : partitions) insides.push_back(p.candidate.sub_graph.inside());
  auto order = order_partitions(dfg, insides);
  if (!order) return std::nullopt;
  std::vector<ChosenPartition> ordered;
  ordered.reserve(partitions.size());
  for (std::size_t position : *order) ordered.push_back(std::move(partitions[position]));
  return ordered;
}

}  // namespace collage
