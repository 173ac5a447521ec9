#include "collage/partition/standard_rules.h"

namespace collage {

PartitionRulePtr make_library_rule(const std::vector<PatternEntry>& patterns,
                                   NodePredicate supported, SubGraphConfig config) {
  std::vector<PartitionRulePtr> rules;
  rules.reserve(patterns.size() + 1);
  for (const PatternEntry& entry : patterns) {
    rules.push_back(std::make_shared<PatternRule>(entry.name, entry.pattern, entry.predicate));
  }
  rules.push_back(std::make_shared<OpPredicateRule>(std::move(supported)));
  auto all = std::make_shared<UnionRule>(std::move(rules));
  return std::make_shared<OnlyValidRule>(std::move(all), config);
}

PartitionRulePtr make_graph_rule(NodePredicate supported, SubGraphConfig config,
                                 std::size_t max_rounds) {
  auto singles = std::make_shared<OpPredicateRule>(std::move(supported));
  std::vector<std::shared_ptr<const CombinerRule>> combiners = {
      std::make_shared<ByKindCombiner>(OpKind::kOpaque, OpKind::kOpaque)};
  auto grown = std::make_shared<CombineRule>(std::move(singles), std::move(combiners), max_rounds);
  return std::make_shared<OnlyValidRule>(std::move(grown), config);
}

std::vector<std::shared_ptr<const CombinerRule>> fuse_ops_combiners() {
  return {
      std::make_shared<ByKindCombiner>(OpKind::kOutElementwiseFusable, OpKind::kBroadcast),
      std::make_shared<ByKindCombiner>(OpKind::kBroadcast, OpKind::kReduction),
      std::make_shared<ByKindCombiner>(OpKind::kInjective, OpKind::kInjective),
      std::make_shared<FanInCombiner>("Concat", OpKind::kInjective),
      std::make_shared<FanOutCombiner>("Split", OpKind::kInjective),
  };
}

PartitionRulePtr make_fusing_rule(NodePredicate supported, SubGraphConfig config,
                                  std::size_t max_rounds) {
  auto singles = std::make_shared<OpPredicateRule>(std::move(supported));
  auto grown = std::make_shared<CombineRule>(std::move(singles), fuse_ops_combiners(), max_rounds);
  return std::make_shared<OnlyValidRule>(std::move(grown), config);
}

}  // namespace collage
