// Plan: how to run a model, partition by partition, and why.
//
// Every strategy (native, single:<backend>, greedy, collage) produces a Plan,
// so they are compared, saved, replayed and drawn the same way. A partition
// names its nodes by their names in the canonical graph (the importer's
// output is deterministic, so the names are stable for the same model and
// input shapes) and the backend that runs them. Provenance (model hash,
// machine, backend versions, threads) tells whether a saved plan still
// applies; the search statistics and each partition's runner-up
// alternatives tell why the plan is what it is.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collage/ir/tensor_type.h"

namespace collage {

// Another way the search could have covered (part of) a partition's nodes.
struct PlanAlternative {
  std::string backend;
  std::string rule;
  int node_count = 0;
  // Infinity-free: invalid alternatives carry `reason` instead of a cost.
  std::optional<double> estimated_ms;
  std::string reason;
};

struct PlanPartition {
  std::string backend;
  // The partition rule (or pattern) that produced the candidate.
  std::string rule;
  std::vector<std::string> nodes;
  std::vector<std::string> ops;
  // Boundary values: read from / written for other partitions or the caller.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::optional<double> estimated_ms;
  std::optional<double> measured_ms;
  std::vector<PlanAlternative> alternatives;
};

struct PlanSearchStats {
  int candidates = 0;
  int measured = 0;
  int cache_hits = 0;
  int invalid = 0;
  int states_expanded = 0;
  double seconds = 0;
  // Local moves measured end to end after the search, and those kept
  // (session/move_refinement.h).
  int moves_tried = 0;
  int moves_kept = 0;
  // With screening (docs/partitioning.md, "Screening"): candidates
  // screened in this run, and candidates ruled out by their bound without
  // running them.
  int screened = 0;
  int ruled_out = 0;
  // The cover the moves started from: "searched" (the shortest path's),
  // or "single:<backend>" or "greedy:<backends>" when that baseline's
  // cover ran faster.
  std::string moves_start;
  // Search routes left unexpanded by the cap on routes per covered set
  // (docs/partitioning.md, "Search").
  int routes_dropped = 0;
  // The plan's estimate from the measurements the search used, when its
  // partitions were timed again afterwards (in a tune's profile rounds, or
  // between compare's runs: session/parts_retiming.h) and
  // Plan::estimated_ms sums the new times.
  std::optional<double> search_estimated_ms;
  // Backends whose candidates crashed or hung the measuring worker in this
  // run: tune and compare run no plan of theirs in their own process.
  std::vector<std::string> failed_backends;
  // The layout the search measured in when it searched in several
  // (--search-layout each): "own" or a layout's name; empty otherwise.
  std::string layout;
};

// One plan measured end to end beside others (tune's verification,
// compare's strategies).
struct PlanStrategyTiming {
  // Its label: "single:onednn [onednn:blocked-16]", "collage".
  std::string strategy;
  double median_ms = 0;
  double p10_ms = 0;
  double p90_ms = 0;
  bool outputs_match = true;
};

struct PlanBody;

struct Plan {
  std::string strategy;
  std::string model_path;
  std::string model_hash;
  std::map<std::string, Shape> input_shapes;
  // The graph optimization level (--graph-opt) the model was canonicalized
  // with: the plan's node names refer to that canonical graph.
  std::string graph_opt = "all";
  std::string machine;
  int threads = 1;
  // Backend name -> version string, for every backend the plan uses.
  std::map<std::string, std::string> backend_versions;
  std::vector<PlanPartition> partitions;
  // Backend name -> the layout its partitions compute in where the backend
  // has a choice (Backend::compute_layouts, by edge_layout_name: "blocked-16");
  // a backend not named computes in its own. The tuner sets it when the
  // plan ran faster so.
  std::map<std::string, std::string> compute_layouts;
  // Sum of the partitions' estimates, when all have one.
  std::optional<double> estimated_ms;
  // End-to-end time of the whole plan, when it was measured.
  std::optional<double> measured_ms;
  PlanSearchStats search;
  // The placement constraints the plan honours, one per line: "place
  // Conv_12=onednn", "avoid xnnpack:op:Softmax", "pattern <backend>:<name>
  // <rule as JSON>" (search/placement.h); empty when there were none.
  std::vector<std::string> placement;
  // The plans tune ran end to end to choose this one (baselines, then the
  // searched plan); empty when it did not verify.
  std::vector<PlanStrategyTiming> verification;
  // Plans of control-flow bodies (an If's branches, a Loop's or Scan's
  // body), each partitioned like a graph of its own; a body without one
  // runs on the native kernels of the partition that holds its node.
  std::vector<PlanBody> bodies;

  // Partitions per backend, sorted by backend name.
  std::map<std::string, int> partitions_per_backend() const;
  // The same as text: "native 2, onednn 1".
  std::string partitions_per_backend_text() const;
  // What the plan runs, as text: each partition's backend and nodes, in
  // order, and the compute layouts. Two plans with the same signature
  // compile to the same program.
  std::string partitions_signature() const;
  // The strategy, with the layout it was searched in when the search
  // measured in several, and the compute layouts when there are any:
  // "single:onednn [onednn:blocked-16]", "collage@blocked-16 [onednn:blocked-16]".
  std::string label() const;
};

// The plan of one body of a control-flow node: the node's name in the
// graph the enclosing plan partitions, the body's index in bodies(node)
// order (If: then 0, else 1) and its attribute name. The plan's node names
// and model hash are the body graph's.
struct PlanBody {
  std::string node;
  std::size_t index = 0;
  std::string name;
  Plan plan;
};

// A plan set holds one plan per set of input shapes: the first repeat in
// `sets`, as {earlier index, later index}; none when they all differ.
std::optional<std::pair<std::size_t, std::size_t>> first_repeated_shapes(
    const std::vector<std::map<std::string, Shape>>& sets);

}  // namespace collage
