#include "collage/search/local_moves.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "collage/partition/partition_order.h"
#include "collage/partition/partition_spec.h"
#include "collage/search/regions.h"
#include "collage/search/strategy.h"

namespace collage {
namespace {

// The valid candidates by backend and operator set, and the operators each
// backend has any valid candidate for.
class CandidateIndex {
 public:
  CandidateIndex(const DataflowGraph& dfg, const std::vector<EstimatedCandidate>& candidates) {
    for (const EstimatedCandidate& e : candidates) {
      if (!e.cost.is_valid()) continue;
      IndexSet ops = operator_set(dfg, e.candidate.sub_graph);
      // Moves go to candidates timed in full: the search found the others
      // no match for the cover by their bound or screen (a screen, the
      // fastest of three calls, reads below a measurement and would offer
      // moves that measure no better; BERT: 59 moves tried instead of 7).
      if (e.fidelity == Fidelity::kExact) by_ops_[ops].push_back(&e);
      auto [it, fresh] = supported_.try_emplace(e.candidate.spec_name(), dfg.empty_set());
      it->second |= ops;
      // The cost of the most trusted timing of these operators alone on
      // this backend (a bound is a floor: the backend takes no less).
      auto [alone, added] =
          alone_.try_emplace({e.candidate.spec_name(), ops}, Alone{e.cost, e.fidelity});
      if (!added && alone->second.fidelity < e.fidelity) alone->second = Alone{e.cost, e.fidelity};
    }
  }

  // The valid candidates with exactly the operators `ops`.
  const std::vector<const EstimatedCandidate*>& with_ops(const IndexSet& ops) const {
    static const std::vector<const EstimatedCandidate*> none;
    auto it = by_ops_.find(ops);
    return it == by_ops_.end() ? none : it->second;
  }

  // The valid candidate of backend `spec` with exactly the operators `ops`.
  const EstimatedCandidate* find(const std::string& spec, const IndexSet& ops) const {
    for (const EstimatedCandidate* e : with_ops(ops)) {
      if (e->candidate.spec_name() == spec) return e;
    }
    return nullptr;
  }

  // Whether backend `spec` has a valid candidate for every operator of `ops`.
  bool supports(const std::string& spec, const IndexSet& ops) const {
    auto it = supported_.find(spec);
    return it != supported_.end() && ops.is_subset(it->second);
  }

  // The cost (seconds) of backend `spec` for exactly the operators `ops`
  // alone, at the best fidelity it was estimated; none without a valid
  // candidate.
  std::optional<double> alone_seconds(const std::string& spec, const IndexSet& ops) const {
    auto it = alone_.find({spec, ops});
    if (it == alone_.end()) return std::nullopt;
    return it->second.cost.seconds();
  }

  // Every candidate timed in full whose operators (at least one) lie
  // strictly inside `ops`.
  std::vector<const EstimatedCandidate*> inside(const IndexSet& ops) const {
    std::vector<const EstimatedCandidate*> found;
    for (const auto& [set, list] : by_ops_) {
      if (!set.empty() && set.is_strict_subset(ops))
        found.insert(found.end(), list.begin(), list.end());
    }
    return found;
  }

  // Every valid candidate of backend `spec` whose operators hold `ops`
  // strictly and lie within `limit`.
  std::vector<const EstimatedCandidate*> growing(const std::string& spec, const IndexSet& ops,
                                                 const IndexSet& limit) const {
    std::vector<const EstimatedCandidate*> found;
    for (const auto& [set, list] : by_ops_) {
      if (!ops.is_strict_subset(set) || !set.is_subset(limit)) continue;
      for (const EstimatedCandidate* e : list) {
        if (e->candidate.spec_name() == spec) found.push_back(e);
      }
    }
    return found;
  }

 private:
  std::map<IndexSet, std::vector<const EstimatedCandidate*>> by_ops_;
  std::map<std::string, IndexSet> supported_;
  struct Alone {
    Cost cost;
    Fidelity fidelity;
  };
  std::map<std::pair<std::string, IndexSet>, Alone> alone_;
};

double seconds_of(const Cost& cost) { return cost.is_valid() ? cost.seconds() : 0.0; }

// The operator types of `ops` in index order: "MaxPool", "Conv,Relu".
std::string op_types(const DataflowGraph& dfg, const IndexSet& ops) {
  std::vector<std::string> types;
  for (PostDfsIndex index : ops) types.push_back(dfg.node(index).op_type);
  return fmt::format("{}", fmt::join(types, ","));
}

// The conversions `cover` pays at its boundaries (seconds), its
// partitions' own costs left out.
double conversion_seconds(const DataflowGraph& dfg, std::vector<ChosenPartition> cover,
                          BoundaryCosts& boundaries) {
  for (ChosenPartition& p : cover) p.cost = Cost::zero();
  charge_boundaries(dfg, cover, boundaries);
  return total_cost(cover).seconds();
}

}  // namespace

const char* to_string(LocalMove::Kind kind) {
  switch (kind) {
    case LocalMove::Kind::kReassign:
      return "reassign";
    case LocalMove::Kind::kMerge:
      return "merge";
    case LocalMove::Kind::kShift:
      return "shift";
    case LocalMove::Kind::kCarve:
      return "carve";
  }
  return "?";
}

std::vector<IndexSet> carve_pieces(const DataflowGraph& dfg, const IndexSet& inside,
                                   const std::vector<IndexSet>& carved) {
  std::vector<IndexSet> after(carved.size(), dfg.empty_set());
  IndexSet rest = inside - dfg.host_set();
  for (std::size_t k = 0; k < carved.size(); ++k) {
    for (PostDfsIndex index : carved[k]) after[k] |= dfg.downstream_of(index);
    rest -= carved[k];
  }
  // Each operator goes with those that follow the same carved sets; the
  // pieces come in the order of their first operators.
  std::map<std::vector<bool>, IndexSet> by_carved_before;
  std::vector<std::vector<bool>> order;
  for (PostDfsIndex index : rest) {
    std::vector<bool> before(carved.size());
    for (std::size_t k = 0; k < carved.size(); ++k) before[k] = after[k].contains(index);
    auto [it, fresh] = by_carved_before.try_emplace(before, dfg.empty_set());
    if (fresh) order.push_back(before);
    it->second.add(index);
  }
  std::vector<IndexSet> pieces;
  for (const std::vector<bool>& before : order) pieces.push_back(by_carved_before.at(before));
  return pieces;
}

std::string describe_move(const std::vector<ChosenPartition>& partitions, const LocalMove& move) {
  if (move.kind == LocalMove::Kind::kCarve) {
    // The pieces left are the partition less the carved operators.
    const CandidatePartition& from = partitions[move.replaced.front()].candidate;
    const std::string carved =
        move.carved == 1 ? move.added.front().to_string()
                         : fmt::format("{} like {}", move.carved, move.added.front().to_string());
    return fmt::format("carve {} out of {}:{} ({} nodes, {} pieces left)", carved, from.spec_name(),
                       from.rule_name, from.sub_graph.size(), move.added.size() - move.carved);
  }
  std::vector<std::string> before;
  for (std::size_t index : move.replaced) before.push_back(partitions[index].candidate.to_string());
  std::vector<std::string> after;
  for (const CandidatePartition& added : move.added) after.push_back(added.to_string());
  return fmt::format("{} {} -> {}", to_string(move.kind), fmt::join(before, " + "),
                     fmt::join(after, " + "));
}

std::vector<LocalMove> propose_local_moves(
    const DataflowGraph& dfg, const std::vector<ChosenPartition>& partitions,
    const std::vector<EstimatedCandidate>& candidates,
    const std::vector<double>& in_context_seconds, BoundaryCosts* boundaries,
    const std::map<PostDfsIndex, double>& op_in_context_seconds) {
  CandidateIndex index(dfg, candidates);
  std::vector<IndexSet> ops;
  ops.reserve(partitions.size());
  for (const ChosenPartition& p : partitions)
    ops.push_back(operator_set(dfg, p.candidate.sub_graph));
  auto in_context = [&](std::size_t i) {
    return i < in_context_seconds.size() ? in_context_seconds[i] : seconds_of(partitions[i].cost);
  };

  std::vector<LocalMove> moves;
  auto offer = [&](LocalMove move, double added_seconds) {
    double replaced_seconds = 0;
    for (std::size_t i : move.replaced) replaced_seconds += in_context(i);
    move.predicted_seconds = added_seconds - replaced_seconds;
    if (move.predicted_seconds <= 0) moves.push_back(std::move(move));
  };

  for (std::size_t i = 0; i < partitions.size(); ++i) {
    const std::string& spec = partitions[i].candidate.spec_name();
    for (const EstimatedCandidate* other : index.with_ops(ops[i])) {
      if (other->candidate.spec_name() == spec) continue;
      offer(LocalMove{LocalMove::Kind::kReassign, {i}, {other->candidate}, 0},
            other->cost.seconds());
    }
  }

  for (std::size_t i = 0; i < partitions.size(); ++i) {
    const SubGraph& first = partitions[i].candidate.sub_graph;
    for (std::size_t j = 0; j < partitions.size(); ++j) {
      const SubGraph& second = partitions[j].candidate.sub_graph;
      if (i == j || !first.feeds(second)) continue;
      IndexSet both = ops[i] | ops[j];
      // Merges, once per pair, on the backend of either side.
      std::set<std::string> merged_on;
      for (std::size_t side : {i, j}) {
        const PartitionSpecPtr& spec = partitions[side].candidate.spec;
        if (!merged_on.insert(spec->name).second || !index.supports(spec->name, both)) continue;
        SubGraph merged = first.disjoint_union(dfg, second);
        if (!merged.is_valid(dfg, spec->merge_config)) continue;
        double parts = seconds_of(partitions[i].cost) + seconds_of(partitions[j].cost);
        offer(LocalMove{LocalMove::Kind::kMerge,
                        {i, j},
                        {CandidatePartition{std::move(merged), spec, "merge"}},
                        0},
              parts);
      }
      // Shifts, in both directions: one side grows into the other with a
      // candidate of its own backend, the other keeps the rest.
      for (auto [grower, giver] : {std::pair{i, j}, std::pair{j, i}}) {
        const std::string& grower_spec = partitions[grower].candidate.spec_name();
        const std::string& giver_spec = partitions[giver].candidate.spec_name();
        for (const EstimatedCandidate* grown : index.growing(grower_spec, ops[grower], both)) {
          IndexSet rest = both - operator_set(dfg, grown->candidate.sub_graph);
          if (rest.empty()) continue;  // a merge, offered above
          const EstimatedCandidate* kept = index.find(giver_spec, rest);
          if (!kept) continue;
          std::vector<std::size_t> replaced = {std::min(grower, giver), std::max(grower, giver)};
          offer(
              LocalMove{LocalMove::Kind::kShift, replaced, {grown->candidate, kept->candidate}, 0},
              grown->cost.seconds() + kept->cost.seconds());
        }
      }
    }
  }
  const double conversions_before =
      boundaries ? conversion_seconds(dfg, partitions, *boundaries) : 0.0;
  // One operator or several carved out of partition i onto another
  // backend, what is left of it kept as regions of its own backend.
  struct Carve {
    const EstimatedCandidate* carved;
    IndexSet ops;
    double own;  // the partition's backend, for these operators alone
  };
  auto offer_carve = [&](std::size_t i, const std::vector<Carve>& carves) {
    const PartitionSpecPtr& spec = partitions[i].candidate.spec;
    const SubGraphConfig config = region_config(*spec);
    std::vector<CandidatePartition> added;
    std::vector<IndexSet> carved_ops;
    double predicted = in_context(i);
    for (const Carve& carve : carves) {
      added.push_back(carve.carved->candidate);
      carved_ops.push_back(carve.ops);
      predicted += carve.carved->cost.seconds() - carve.own;
    }
    for (IndexSet& piece :
         carve_pieces(dfg, partitions[i].candidate.sub_graph.inside(), carved_ops)) {
      SubGraph kept(dfg, std::move(piece));
      if (!kept.is_valid(dfg, config)) return;
      added.push_back(CandidatePartition{std::move(kept), spec, "carve"});
    }
    if (boundaries) {
      std::vector<ChosenPartition> after;
      for (std::size_t p = 0; p < partitions.size(); ++p) {
        if (p != i) after.push_back(partitions[p]);
      }
      for (const CandidatePartition& c : added) after.push_back({c, Cost::zero()});
      predicted += conversion_seconds(dfg, std::move(after), *boundaries) - conversions_before;
    }
    LocalMove move{LocalMove::Kind::kCarve, {i}, std::move(added), 0};
    move.carved = carves.size();
    offer(std::move(move), predicted);
  };
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    const std::string& spec = partitions[i].candidate.spec_name();
    // The carves that pay alone, grouped by the backend they go to and
    // the operator types they hold.
    std::map<std::string, std::vector<Carve>> alike;
    for (const EstimatedCandidate* carved : index.inside(ops[i])) {
      if (carved->candidate.spec_name() == spec) continue;
      IndexSet carved_ops = operator_set(dfg, carved->candidate.sub_graph);
      std::optional<double> own = index.alone_seconds(spec, carved_ops);
      if (carved_ops.popcount() == 1) {
        auto it = op_in_context_seconds.find(*carved_ops.first_inside());
        if (it != op_in_context_seconds.end()) own = it->second;
      }
      if (!own || !(carved->cost.seconds() < *own)) continue;
      Carve carve{carved, carved_ops, *own};
      offer_carve(i, {carve});
      alike[carved->candidate.spec_name() + ":" + op_types(dfg, carved_ops)].push_back(carve);
    }
    // Every such operator at once: a kernel slower on the region's backend
    // (a pooling, a depthwise convolution) repeats through a network, and
    // one instance may save less than a timing tells from noise where all
    // of them save several percent. The carves that save most come first,
    // then those of the rest that overlap none taken.
    for (auto& [kind, carves] : alike) {
      std::stable_sort(carves.begin(), carves.end(), [](const Carve& a, const Carve& b) {
        return a.own - a.carved->cost.seconds() > b.own - b.carved->cost.seconds();
      });
      std::vector<Carve> disjoint;
      IndexSet taken = dfg.empty_set();
      for (const Carve& carve : carves) {
        if (carve.ops.intersects(taken)) continue;
        taken |= carve.ops;
        disjoint.push_back(carve);
      }
      if (disjoint.size() > 1) offer_carve(i, disjoint);
    }
  }
  std::stable_sort(moves.begin(), moves.end(), [](const LocalMove& a, const LocalMove& b) {
    return a.predicted_seconds < b.predicted_seconds;
  });
  return moves;
}

std::optional<MovedCover> apply_local_move(const DataflowGraph& dfg,
                                           const std::vector<ChosenPartition>& partitions,
                                           const LocalMove& move, CostEstimator& estimator,
                                           std::string& why, Fidelity fidelity) {
  std::vector<ChosenPartition> after;
  std::vector<std::optional<std::size_t>> previous;
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    if (std::find(move.replaced.begin(), move.replaced.end(), i) != move.replaced.end()) continue;
    after.push_back(partitions[i]);
    previous.emplace_back(i);
  }
  for (const CandidatePartition& added : move.added) {
    Cost cost = estimator.bound(dfg, added, fidelity).cost;
    if (!cost.is_valid()) {
      why = fmt::format("{} is invalid: {}", added.to_string(), cost.reason());
      return std::nullopt;
    }
    after.push_back(ChosenPartition{added, std::move(cost)});
    previous.emplace_back(std::nullopt);
  }
  std::vector<IndexSet> insides;
  insides.reserve(after.size());
  for (const ChosenPartition& p : after) insides.push_back(p.candidate.sub_graph.inside());
  auto order = order_partitions(dfg, insides);
  if (!order) {
    why = "the partitions would feed each other in a cycle";
    return std::nullopt;
  }
  MovedCover moved;
  for (std::size_t position : *order) {
    moved.partitions.push_back(std::move(after[position]));
    moved.previous.push_back(previous[position]);
  }
  return moved;
}

std::vector<ChosenPartition> with_boundary_charges(const DataflowGraph& dfg,
                                                   std::vector<ChosenPartition> partitions,
                                                   BoundaryCosts* boundaries) {
  if (boundaries) charge_boundaries(dfg, partitions, *boundaries);
  return partitions;
}

std::string cover_to_text(const std::vector<ChosenPartition>& partitions) {
  std::string text;
  for (const ChosenPartition& p : partitions) {
    text += fmt::format("{} {} {}\n", p.candidate.spec_name(),
                        fmt::join(p.candidate.sub_graph.inside().to_vector(), ","),
                        p.candidate.rule_name);
  }
  return text;
}

std::optional<std::vector<ChosenPartition>> cover_from_text(
    const DataflowGraph& dfg, const std::vector<PartitionSpecPtr>& specs, const std::string& text,
    CostEstimator& estimator) {
  std::vector<ChosenPartition> partitions;
  IndexSet covered = dfg.empty_set();
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string spec_name, indices, rule;
    if (!(fields >> spec_name >> indices) || !std::getline(fields >> std::ws, rule)) {
      return std::nullopt;
    }
    auto spec = std::find_if(specs.begin(), specs.end(),
                             [&](const PartitionSpecPtr& s) { return s->name == spec_name; });
    if (spec == specs.end()) return std::nullopt;
    IndexSet inside = dfg.empty_set();
    std::istringstream items(indices);
    for (std::string item; std::getline(items, item, ',');) {
      std::size_t index = 0;
      try {
        index = std::stoul(item);
      } catch (const std::exception&) {
        return std::nullopt;
      }
      if (index >= dfg.size()) return std::nullopt;
      inside.add(index);
    }
    if (inside.empty() || inside.intersects(covered)) return std::nullopt;
    covered |= inside;
    CandidatePartition candidate{SubGraph(dfg, inside), *spec, rule};
    Cost cost = estimator.estimate(dfg, candidate);
    if (!cost.is_valid()) return std::nullopt;
    partitions.push_back(ChosenPartition{std::move(candidate), std::move(cost)});
  }
  if (!(IndexSet::all(dfg.size()) - dfg.host_set()).is_subset(covered)) return std::nullopt;
  return in_execution_order(dfg, std::move(partitions));
}

std::vector<ChosenPartition> with_costs_alone(const DataflowGraph& dfg,
                                              std::vector<ChosenPartition> partitions,
                                              CostEstimator& estimator, Fidelity fidelity) {
  for (ChosenPartition& p : partitions) {
    p.cost = fidelity == Fidelity::kExact ? estimator.estimate(dfg, p.candidate)
                                          : estimator.bound(dfg, p.candidate, fidelity).cost;
  }
  return partitions;
}

}  // namespace collage
