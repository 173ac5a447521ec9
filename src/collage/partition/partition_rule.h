// PartitionRule: how a backend enumerates the sub-graphs it could run.
//
// Rules are small and compose, after TVM Collage's partition rules:
//   OpPredicateRule  every single operator the backend supports,
//   PatternRule      every match of one named pattern (a library's fused call),
//   UnionRule        the candidates of several rules,
//   CombineRule      a sub-rule's candidates merged by combiners to a fixed point,
//   OnlyValidRule    a sub-rule's candidates that are valid under a config,
//   HostRule         graph inputs and constants, which cost nothing to "run".
// A backend's whole rule is a tree of these (see standard_rules.h). Rules
// return candidates tagged with the spec they are asked for; they never look
// at costs, which come later.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collage/ir/graph.h"
#include "collage/ir/pattern.h"
#include "collage/partition/candidate_partition.h"
#include "collage/partition/combiner_rule.h"
#include "collage/partition/dataflow_graph.h"
#include "collage/partition/partition_spec.h"
#include "collage/partition/sub_graph.h"

namespace collage {

// Whether a backend can run a node (the Backend::supports of the backend layer).
using NodePredicate = std::function<bool(const Graph&, const Node&)>;
// Whether a backend can run a whole pattern match (node ids in increasing order).
using MatchPredicate = std::function<bool(const Graph&, const std::vector<NodeId>&)>;

class PartitionRule {
 public:
  explicit PartitionRule(std::string name) : name_(std::move(name)) {}
  virtual ~PartitionRule() = default;

  const std::string& name() const { return name_; }
  virtual std::vector<CandidatePartition> candidates(const DataflowGraph& dfg,
                                                     const PartitionSpecPtr& spec) const = 0;

 private:
  std::string name_;
};

using PartitionRulePtr = std::shared_ptr<const PartitionRule>;

// One candidate per operator node that `supported` accepts.
class OpPredicateRule : public PartitionRule {
 public:
  explicit OpPredicateRule(NodePredicate supported, std::string name = "op")
      : PartitionRule(std::move(name)), supported_(std::move(supported)) {}
  std::vector<CandidatePartition> candidates(const DataflowGraph& dfg,
                                             const PartitionSpecPtr& spec) const override;

 private:
  NodePredicate supported_;
};

// One candidate per distinct match of `pattern` (rooted at each operator in
// turn) that `predicate` accepts; the candidates are labelled with `name`.
class PatternRule : public PartitionRule {
 public:
  PatternRule(std::string name, Pattern pattern, MatchPredicate predicate = {})
      : PartitionRule(std::move(name)),
        pattern_(std::move(pattern)),
        predicate_(std::move(predicate)) {}
  std::vector<CandidatePartition> candidates(const DataflowGraph& dfg,
                                             const PartitionSpecPtr& spec) const override;

 private:
  Pattern pattern_;
  MatchPredicate predicate_;
};

// The candidates of each sub-rule in order; a repeated inside set keeps its
// first candidate.
class UnionRule : public PartitionRule {
 public:
  explicit UnionRule(std::vector<PartitionRulePtr> rules, std::string name = "union")
      : PartitionRule(std::move(name)), rules_(std::move(rules)) {}
  std::vector<CandidatePartition> candidates(const DataflowGraph& dfg,
                                             const PartitionSpecPtr& spec) const override;

 private:
  std::vector<PartitionRulePtr> rules_;
};

// The sub-rule's candidates, then, round after round, every merge the
// combiners propose that is new and valid under the spec's config, until a
// round adds nothing or `max_rounds` rounds have run. Validity is checked as
// candidates grow, which keeps the growth bounded by the config (depth above
// all); the merged candidates carry the combiner's name as their rule name.
//
// Depth alone does not bound the count where branches meet: at a node that
// joins k branches (a detector head's final Concat), every combination of
// the branches' own candidates is a candidate, so the count is a product
// over the branches (39,000 on a three-scale YOLO head, where a chain or a
// residual block gives tens). So a merge is also dropped once a node in it
// lies in `max_per_node` candidates already. Rounds grow candidates from
// small to large, so the cap keeps the smaller ones and every candidate
// that a model without such a join has (its nodes lie in at most 23).
class CombineRule : public PartitionRule {
 public:
  static constexpr std::size_t kDefaultMaxRounds = 32;
  static constexpr std::size_t kDefaultMaxPerNode = 64;

  CombineRule(PartitionRulePtr sub_rule, std::vector<std::shared_ptr<const CombinerRule>> combiners,
              std::size_t max_rounds = kDefaultMaxRounds, std::string name = "combine",
              std::size_t max_per_node = kDefaultMaxPerNode)
      : PartitionRule(std::move(name)),
        sub_rule_(std::move(sub_rule)),
        combiners_(std::move(combiners)),
        max_rounds_(max_rounds),
        max_per_node_(max_per_node) {}
  std::vector<CandidatePartition> candidates(const DataflowGraph& dfg,
                                             const PartitionSpecPtr& spec) const override;

 private:
  PartitionRulePtr sub_rule_;
  std::vector<std::shared_ptr<const CombinerRule>> combiners_;
  std::size_t max_rounds_;
  std::size_t max_per_node_;
};

// The sub-rule's candidates that are valid under `config`.
class OnlyValidRule : public PartitionRule {
 public:
  OnlyValidRule(PartitionRulePtr sub_rule, SubGraphConfig config, std::string name = "only_valid")
      : PartitionRule(std::move(name)), sub_rule_(std::move(sub_rule)), config_(config) {}
  std::vector<CandidatePartition> candidates(const DataflowGraph& dfg,
                                             const PartitionSpecPtr& spec) const override;

 private:
  PartitionRulePtr sub_rule_;
  SubGraphConfig config_;
};

// One candidate per graph input and constant. The search covers these at
// zero cost by itself; the rule exists for callers that want host nodes as
// explicit partitions (a "host" spec in a plan).
class HostRule : public PartitionRule {
 public:
  HostRule() : PartitionRule("host") {}
  std::vector<CandidatePartition> candidates(const DataflowGraph& dfg,
                                             const PartitionSpecPtr& spec) const override;
};

}  // namespace collage
