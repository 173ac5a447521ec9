// A graph, the specs of a few mock backends, and a mock estimator: the
// setting of the search tests.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collage/backends/backend.h"
#include "collage/cost/mock_cost_estimator.h"
#include "collage/partition/partition_rule.h"
#include "collage/partition/prune_candidates.h"
#include "collage/partition/standard_rules.h"
#include "collage/search/shortest_path.h"
#include "partition/graph_builder.h"

namespace collage::testing {

inline bool any_op(const Graph&, const Node&) { return true; }

// A rule that offers fixed sets of nodes, for candidates no combiner would build.
class FixedRule : public PartitionRule {
 public:
  explicit FixedRule(std::vector<IndexSet> sets) : PartitionRule("fixed"), sets_(std::move(sets)) {}
  std::vector<CandidatePartition> candidates(const DataflowGraph& dfg,
                                             const PartitionSpecPtr& spec) const override {
    std::vector<CandidatePartition> out;
    for (const IndexSet& set : sets_) out.push_back({SubGraph(dfg, set), spec, name()});
    return out;
  }

 private:
  std::vector<IndexSet> sets_;
};

// x -> a Relu -> b Abs -> c Neg (output)
inline Graph chain3() {
  GraphBuilder b;
  ValueId a = b.op("Relu", {b.input("x")}, "a");
  ValueId bb = b.op("Abs", {a}, "b");
  b.output(b.op("Neg", {bb}, "c"));
  return std::move(b.graph());
}

inline NodePredicate ops_of_type(std::set<std::string> types) {
  return [types = std::move(types)](const Graph&, const Node& node) {
    return types.count(node.op_type) != 0;
  };
}

// Charges `seconds` on every boundary between partitions of two different
// backends, to the producer; nothing at graph inputs and outputs.
class FixedBoundaryCosts : public BoundaryCosts {
 public:
  explicit FixedBoundaryCosts(double seconds) : seconds_(seconds) {}
  BoundaryCharge charge(const DataflowGraph&, PostDfsIndex, const std::string& from,
                        const IndexSet*, const IndexSet* to_nodes, const std::string& to,
                        const PlacedOperators*) override {
    ++calls;
    if (from.empty() || to_nodes == nullptr || from == to) return {};
    return {.producer_seconds = seconds_};
  }
  int calls = 0;

 private:
  double seconds_;
};

class NoKernel : public Kernel {
 public:
  void run(std::span<const Tensor>, std::span<Tensor>) override {}
};

// A graph-style backend that runs every op but those of `unsupported`, and
// compiles only partitions of at most `max_nodes` nodes, like XNNPACK with a
// region whose values would need two layouts.
class SmallRegionsBackend : public Backend {
 public:
  explicit SmallRegionsBackend(std::size_t max_nodes, std::set<std::string> unsupported = {})
      : max_nodes_(max_nodes), unsupported_(std::move(unsupported)) {}
  std::string name() const override { return "small"; }
  std::string version() const override { return "1"; }
  BackendStyle style() const override { return BackendStyle::kGraph; }
  bool supports(const Graph&, const Node& node) const override {
    return unsupported_.count(node.op_type) == 0;
  }
  std::string describe_support() const override { return "most ops, in small regions"; }
  Result<std::unique_ptr<Kernel>> compile(const Graph& partition,
                                          const CompileOptions&) const override {
    if (partition.num_nodes() > max_nodes_) return Failure{"region too large"};
    return std::unique_ptr<Kernel>(std::make_unique<NoKernel>());
  }

 private:
  std::size_t max_nodes_;
  std::set<std::string> unsupported_;
};

class SearchFixture {
 public:
  // The graph sits behind a pointer so that the DataflowGraph's reference to
  // it survives moving the fixture.
  explicit SearchFixture(Graph graph)
      : graph_(std::make_unique<Graph>(std::move(graph))),
        dfg_(std::make_unique<DataflowGraph>(*graph_)) {}

  const DataflowGraph& dfg() const { return *dfg_; }
  MockCostEstimator& costs() { return costs_; }

  // The native backend: every op, alone.
  SearchFixture& native_singles() {
    return add_spec("native", std::make_shared<OpPredicateRule>(any_op), {});
  }
  // The native backend fusing by kind.
  SearchFixture& native_fusing(SubGraphConfig config = {}) {
    return add_spec("native", make_fusing_rule(any_op, config), config);
  }
  // A graph-style backend over the given op types.
  SearchFixture& graph_backend(const std::string& name, std::set<std::string> types,
                               SubGraphConfig config = {}) {
    return add_spec(name, make_graph_rule(ops_of_type(std::move(types)), config), config);
  }
  SearchFixture& add_spec(const std::string& name, PartitionRulePtr rule, SubGraphConfig config,
                          std::optional<SubGraphConfig> merge_config = std::nullopt) {
    specs_.push_back(make_partition_spec(name, std::move(rule), config, nullptr, merge_config));
    return *this;
  }
  const std::vector<PartitionSpecPtr>& specs() const { return specs_; }
  const PartitionSpecPtr& spec(const std::string& name) const {
    for (const auto& spec : specs_) {
      if (spec->name == name) return spec;
    }
    throw std::runtime_error("no spec " + name);
  }

  std::vector<CandidatePartition> candidates(bool prune = false) const {
    auto all = gather_candidates(*dfg_, specs_);
    return prune ? prune_candidates(std::move(all)) : all;
  }
  SearchResult search(bool prune = false, BoundaryCosts* boundaries = nullptr) {
    return find_cheapest_cover(*dfg_, candidates(prune), costs_, boundaries);
  }

  // "spec:node,node" per partition, in the result's order.
  std::vector<std::string> describe(const std::vector<ChosenPartition>& partitions) const {
    std::vector<std::string> lines;
    for (const ChosenPartition& partition : partitions) {
      std::string line = partition.candidate.spec_name() + ":";
      bool first = true;
      for (const std::string& name : names_of(*dfg_, partition.candidate.sub_graph.inside())) {
        line += (first ? "" : ",") + name;
        first = false;
      }
      lines.push_back(line);
    }
    return lines;
  }
  std::vector<std::string> describe(const SearchResult& result) const {
    return describe(result.partitions);
  }

 private:
  std::unique_ptr<Graph> graph_;
  std::unique_ptr<DataflowGraph> dfg_;
  std::vector<PartitionSpecPtr> specs_;
  MockCostEstimator costs_;
};

}  // namespace collage::testing
