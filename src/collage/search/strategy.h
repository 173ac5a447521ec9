// Strategy: how a plan is made.
//
//   native               every node on the native backend
//   single:<backend>     that backend wherever it can run a node, native elsewhere
//   greedy:<b1>,<b2>,..  backends in priority order, each taking its largest
//                        regions first, native for the rest: what TVM BYOC's
//                        partition_for_* and ONNX Runtime's execution
//                        providers do
//   collage              measure every candidate of every backend and take
//                        the cheapest cover (the search)
// All four produce the same chosen-partition list, so plans, reports and the
// executor treat them alike.
#pragma once

#include <string>
#include <vector>

#include "collage/partition/dataflow_graph.h"
#include "collage/partition/partition_spec.h"
#include "collage/search/shortest_path.h"

namespace collage {

struct Strategy {
  enum class Kind { kNative, kSingle, kGreedy, kCollage };
  Kind kind = Kind::kNative;
  // The backends named by single: and greedy:, in priority order.
  std::vector<std::string> backends;

  // Parses "native", "single:onednn", "greedy:onednn,xnnpack", "collage".
  // Throws Error for anything else (backend names are checked by the caller).
  static Strategy parse(const std::string& text);
  std::string to_string() const;
};

// Greedy placement: for each spec in `priority` order, its candidates from
// the largest down take every region still free, as long as the chosen
// partitions stay acyclic and the spec's backend compiles the candidate;
// `fallback` (native) covers what is left the same way. Costs are left zero (greedy does not
// estimate). Throws Error naming a node nothing can run.
std::vector<ChosenPartition> greedy_cover(const DataflowGraph& dfg,
                                          const std::vector<PartitionSpecPtr>& priority,
                                          const PartitionSpecPtr& fallback);

// "onednn,,xnnpack" -> {"onednn", "xnnpack"}: the names of a comma-separated
// list, empty entries dropped (shared by --strategy and --backends).
std::vector<std::string> split_backend_names(const std::string& text);

// Whether `spec`'s backend compiles `sub_graph` as one partition. A region
// of supported nodes may still not compile as a whole (XNNPACK cannot hold a
// value in two layouts without a transpose); greedy placement measures
// nothing, so it compiles what it takes. Specs without a backend (tests of
// the search) always pass.
bool spec_compiles(const DataflowGraph& dfg, const PartitionSpec& spec, const SubGraph& sub_graph);

// The operator indices of a candidate (constants merged into it excluded).
IndexSet operator_set(const DataflowGraph& dfg, const SubGraph& sub_graph);

}  // namespace collage
