// The search by screening (CollageOptions::screen): with bounds and screens
// no larger than the exact costs (a screen within kScreenNoise of them), it
// finds the cover the exhaustive search finds, and asks for fewer exact
// costs.
#include <gtest/gtest.h>

#include <cmath>

#include "collage/search/collage_partitioner.h"
#include "search/search_fixture.h"

namespace collage {
namespace {

using testing::GraphBuilder;
using testing::SearchFixture;

// A mock whose bound is a fraction of the exact cost and whose screen reads
// a little above or below it; it counts what it was asked.
class ScreeningMock : public CostEstimator {
 public:
  ScreeningMock(MockCostEstimator& exact, double bound_fraction, double screen_factor)
      : exact_(exact), bound_fraction_(bound_fraction), screen_factor_(screen_factor) {}

  Cost estimate(const DataflowGraph& dfg, const CandidatePartition& candidate) override {
    ++exact_calls;
    return exact_.estimate(dfg, candidate);
  }
  BoundedCost bound(const DataflowGraph& dfg, const CandidatePartition& candidate,
                    Fidelity at_least) override {
    if (at_least == Fidelity::kExact) return {estimate(dfg, candidate), Fidelity::kExact};
    Cost cost = exact_.estimate(dfg, candidate);
    if (!cost.is_valid()) return {cost, Fidelity::kExact};
    if (at_least == Fidelity::kBound) {
      return {Cost::value(cost.seconds() * bound_fraction_), Fidelity::kBound};
    }
    ++screens;
    return {Cost::value(cost.seconds() * screen_factor_), Fidelity::kScreened};
  }

  int exact_calls = 0;
  int screens = 0;

 private:
  MockCostEstimator& exact_;
  double bound_fraction_;
  double screen_factor_;
};

// A chain of eight ops of three kinds.
Graph chain8() {
  GraphBuilder b;
  ValueId v = b.input("x");
  const char* types[] = {"Relu", "Abs", "Neg", "Relu", "Abs", "Neg", "Relu", "Abs"};
  for (int i = 0; i < 8; ++i) v = b.op(types[i], {v}, "n" + std::to_string(i));
  b.output(v);
  return std::move(b.graph());
}

// Native, a fast backend for Relu and Abs, and a slow one for everything.
SearchFixture three_backends() {
  SearchFixture f(chain8());
  f.native_singles()
      .graph_backend("fast", {"Relu", "Abs"}, {.max_depth = 3})
      .graph_backend("slow", {"Relu", "Abs", "Neg"}, {.max_depth = 3});
  f.costs()
      .set_default_op_cost("native", 4.0)
      .set_op_cost("fast", "Relu", 1.0)
      .set_op_cost("fast", "Abs", 1.5)
      .set_default_op_cost("slow", 40.0)
      .set_partition_overhead(0.5);
  return f;
}

double total_of(const CollageResult& result) { return result.search.total.seconds(); }

// The search over `f`'s candidates without coalescing, every candidate
// estimated exactly (screen false) or by screening with `estimator`.
CollageResult search(SearchFixture& f, CostEstimator& estimator, bool screen) {
  CollageOptions options;
  options.coalesce = false;
  options.screen = screen;
  return collage_partition(f.dfg(), f.specs(), estimator, options);
}

TEST(ScreeningTest, FindsTheExhaustiveCoverWithFewerExactCosts) {
  SearchFixture f = three_backends();
  ScreeningMock all(f.costs(), 0.5, 1.0);
  CollageResult expected = search(f, all, false);
  ScreeningMock lazy(f.costs(), 0.5, 1.05);
  CollageResult found = search(f, lazy, true);

  EXPECT_EQ(f.describe(found.search), f.describe(expected.search));
  EXPECT_DOUBLE_EQ(total_of(found), total_of(expected));
  EXPECT_EQ(static_cast<std::size_t>(all.exact_calls), expected.candidates.size());
  EXPECT_LT(lazy.exact_calls, all.exact_calls);
  EXPECT_GT(lazy.screens, 0);
  // The cover is exact; the slow backend, at half its cost, never came close.
  for (const EstimatedCandidate& e : found.candidates) {
    if (e.candidate.spec_name() == "slow") {
      EXPECT_EQ(e.fidelity, Fidelity::kBound) << e.candidate.to_string();
    }
  }
  EXPECT_GT(found.left_bounded, 0U);
  EXPECT_EQ(found.candidates.size(), expected.candidates.size());
  EXPECT_GE(found.screening_rounds, 2);
}

TEST(ScreeningTest, AScreenBelowTheExactCostWithinTheNoiseStillFindsTheCover) {
  SearchFixture f = three_backends();
  ScreeningMock all(f.costs(), 0.5, 1.0);
  ScreeningMock lazy(f.costs(), 0.5, 1.0 - kScreenNoise / 2);
  CollageResult expected = search(f, all, false);
  CollageResult found = search(f, lazy, true);
  EXPECT_DOUBLE_EQ(total_of(found), total_of(expected));
}

TEST(ScreeningTest, WithoutBoundsOrScreensEveryCandidateIsExact) {
  SearchFixture f = three_backends();
  // MockCostEstimator has no bound(): every candidate is exact at once.
  CollageResult found = search(f, f.costs(), true);
  EXPECT_EQ(f.costs().estimate_count(), found.candidates.size());
  EXPECT_EQ(found.left_bounded, 0U);
  EXPECT_EQ(found.left_screened, 0U);
  EXPECT_EQ(found.screening_rounds, 1);
}

}  // namespace
}  // namespace collage
