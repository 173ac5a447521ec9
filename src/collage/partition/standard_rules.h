// The partition rules of the three backend styles.
//
// Backends differ in what a single call can run, and their rules say so:
//   library style   each supported op alone, plus the fused calls the
//                   library names by pattern (oneDNN's conv+bias+relu);
//   graph style     any convex region of supported ops, as one compiled
//                   graph (XNNPACK's subgraph API, TensorRT);
//   fusing compiler regions that obey kind-based fusion rules (TVM's FuseOps):
//                   a complex op with its elementwise epilogue, chains of
//                   injective ops, injective ops feeding a reduction.
// Each returns a rule whose candidates are valid under `config`; the caller
// puts it into a PartitionSpec with the same config.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "collage/ir/pattern.h"
#include "collage/partition/combiner_rule.h"
#include "collage/partition/partition_rule.h"
#include "collage/partition/sub_graph.h"

namespace collage {

// A library's named multi-op entry; the predicate is optional.
struct PatternEntry {
  std::string name;
  Pattern pattern;
  MatchPredicate predicate;
};

// OnlyValid(Union(PatternRule for each entry..., OpPredicate(supported))).
PartitionRulePtr make_library_rule(const std::vector<PatternEntry>& patterns,
                                   NodePredicate supported, SubGraphConfig config);

// OnlyValid(Combine(OpPredicate(supported), {any kind into any kind})).
PartitionRulePtr make_graph_rule(NodePredicate supported, SubGraphConfig config,
                                 std::size_t max_rounds = CombineRule::kDefaultMaxRounds);

// The combiners of a FuseOps-like compiler: out-elementwise-fusable into
// broadcast, broadcast into reduction, injective into injective, Concat with
// its injective producers, Split with its injective consumers.
std::vector<std::shared_ptr<const CombinerRule>> fuse_ops_combiners();

// OnlyValid(Combine(OpPredicate(supported), fuse_ops_combiners())).
PartitionRulePtr make_fusing_rule(NodePredicate supported, SubGraphConfig config,
                                  std::size_t max_rounds = CombineRule::kDefaultMaxRounds);

}  // namespace collage
