// CombinerRule: how CombineRule grows candidates by merging them.
//
// CombineRule (partition_rule.h) starts from the candidates of a sub-rule and
// merges them, round after round, until nothing new appears. A combiner
// decides which merges to try in a round: pairs of touching candidates whose
// kinds allow it (ByKindCombiner, which expresses the fusion rules of a
// compiler such as TVM's FuseOps), a Concat with all its producers at once
// (FanInCombiner), a Split with all its consumers at once (FanOutCombiner),
// or a candidate with the constants it reads (ConstantCombiner).
//
// Every merge a combiner proposes involves at least one candidate that is
// new in this round, and pairwise merges consider new candidates on *both*
// sides: an old upstream candidate must also merge with a new downstream one
// (TVM's combiner only grew new candidates downstream, which misses merges
// such as a convolution joining a freshly built elementwise chain).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "collage/partition/candidate_partition.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/partition/op_kind.h"
#include "collage/partition/sub_graph.h"

namespace collage {

// What a combiner sees in one round.
class CombineRound {
 public:
  CombineRound(const DataflowGraph& dfg, const std::vector<CandidatePartition>& candidates,
               std::size_t first_new, const std::vector<std::vector<std::size_t>>& containing)
      : dfg_(dfg), candidates_(candidates), first_new_(first_new), containing_(containing) {}

  const DataflowGraph& dfg() const { return dfg_; }
  // All candidates so far, in the order they were found.
  const std::vector<CandidatePartition>& candidates() const { return candidates_; }
  const SubGraph& sub_graph(std::size_t candidate) const {
    return candidates_[candidate].sub_graph;
  }
  // Whether the candidate appeared in the previous round (or is a sub-rule
  // candidate, in the first round).
  bool is_new(std::size_t candidate) const { return candidate >= first_new_; }
  std::size_t first_new() const { return first_new_; }
  // The candidates whose inside holds `index`, in increasing order.
  const std::vector<std::size_t>& containing(PostDfsIndex index) const {
    return containing_[index];
  }
  // The candidate whose inside is exactly {index}, if any.
  std::optional<std::size_t> singleton(PostDfsIndex index) const;

 private:
  const DataflowGraph& dfg_;
  const std::vector<CandidatePartition>& candidates_;
  std::size_t first_new_;
  const std::vector<std::vector<std::size_t>>& containing_;
};

class CombinerRule {
 public:
  virtual ~CombinerRule() = default;
  // Short name, recorded as the rule name of the candidates it builds.
  virtual std::string name() const = 0;
  // Appends the inside sets of the merges this rule proposes in `round`.
  // CombineRule drops sets it has seen and sub-graphs invalid under the
  // spec's config, so proposing is cheap and needs no checks.
  virtual void combine(const CombineRound& round, std::vector<IndexSet>& results) const = 0;
};

// A rule that looks at one upstream candidate feeding one downstream
// candidate at a time. The base class enumerates the touching, disjoint
// pairs that involve a new candidate on either side.
class PairwiseCombiner : public CombinerRule {
 public:
  // Whether `upstream`, which feeds `downstream`, may merge with it.
  virtual bool fires(const DataflowGraph& dfg, const SubGraph& upstream,
                     const SubGraph& downstream) const = 0;
  void combine(const CombineRound& round, std::vector<IndexSet>& results) const final;
};

// Merges an upstream candidate of kind <= `upstream` into a downstream
// candidate of kind <= `downstream` that it feeds.
class ByKindCombiner : public PairwiseCombiner {
 public:
  ByKindCombiner(OpKind upstream, OpKind downstream)
      : upstream_(upstream), downstream_(downstream) {}
  std::string name() const override;
  bool fires(const DataflowGraph& dfg, const SubGraph& upstream,
             const SubGraph& downstream) const override;

 private:
  OpKind upstream_;
  OpKind downstream_;
};

// Merges a candidate that reads the outputs of several producers through a
// node of type `op_type` (Concat) with all of those producers at once, each
// taken as its single-node candidate of kind <= `max_producer_kind`. This
// states "a concatenation absorbs its producers" directly, in one round,
// instead of through pairwise kind rules that would also fire elsewhere.
class FanInCombiner : public CombinerRule {
 public:
  FanInCombiner(std::string op_type, OpKind max_producer_kind)
      : op_type_(std::move(op_type)), max_producer_kind_(max_producer_kind) {}
  std::string name() const override;
  void combine(const CombineRound& round, std::vector<IndexSet>& results) const override;

 private:
  std::string op_type_;
  OpKind max_producer_kind_;
};

// The mirror image for a node of type `op_type` (Split) whose outputs feed
// several consumers: merges the candidate holding it with all those
// consumers at once, each taken as its single-node candidate of kind <=
// `max_consumer_kind`.
class FanOutCombiner : public CombinerRule {
 public:
  FanOutCombiner(std::string op_type, OpKind max_consumer_kind)
      : op_type_(std::move(op_type)), max_consumer_kind_(max_consumer_kind) {}
  std::string name() const override;
  void combine(const CombineRound& round, std::vector<IndexSet>& results) const override;

 private:
  std::string op_type_;
  OpKind max_consumer_kind_;
};

// Merges a candidate with all the constants it reads, for backends that
// want weights inside their partitions. extract() copies the constants a
// partition reads in any case, so the standard rules do without it.
class ConstantCombiner : public CombinerRule {
 public:
  std::string name() const override { return "constants"; }
  void combine(const CombineRound& round, std::vector<IndexSet>& results) const override;
};

}  // namespace collage
