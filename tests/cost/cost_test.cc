#include "collage/cost/cost.h"

#include <gtest/gtest.h>

#include <cmath>

namespace collage {
namespace {

TEST(CostTest, ZeroIsAValidCostOfNoTime) {
  EXPECT_TRUE(Cost::zero().is_valid());
  EXPECT_EQ(Cost::zero().seconds(), 0.0);
}

TEST(CostTest, ValuesAdd) {
  Cost sum = Cost::value(1.5) + Cost::value(2.0);
  EXPECT_TRUE(sum.is_valid());
  EXPECT_DOUBLE_EQ(sum.seconds(), 3.5);
}

TEST(CostTest, InvalidAbsorbsWhatIsAddedAndKeepsTheFirstReason) {
  Cost sum = Cost::value(1.0) + Cost::invalid("cannot compile") + Cost::invalid("later");
  EXPECT_FALSE(sum.is_valid());
  EXPECT_EQ(sum.reason(), "cannot compile");
  EXPECT_TRUE(std::isinf(sum.seconds()));
}

TEST(CostTest, InvalidOrdersAfterEveryValidCost) {
  EXPECT_LT(Cost::value(1e9), Cost::invalid("x"));
  EXPECT_GT(Cost::invalid("x"), Cost::zero());
  EXPECT_EQ(Cost::invalid("x"), Cost::invalid("y"));
  EXPECT_LT(Cost::value(1.0), Cost::value(2.0));
}

TEST(CostTest, MeasuredKeepsItsSpread) {
  Cost cost = Cost::measured(0.002, 0.003, 25);
  EXPECT_TRUE(cost.is_measured());
  EXPECT_DOUBLE_EQ(cost.seconds(), 0.002);
  EXPECT_DOUBLE_EQ(cost.p90_seconds(), 0.003);
  EXPECT_EQ(cost.samples(), 25u);
  EXPECT_EQ(cost.to_string(), "2.00 ms (p90 3.00 ms, n=25)");
}

TEST(CostTest, SumOfMeasurementsAddsMediansAndPercentilesButIsNoMeasurement) {
  Cost sum = Cost::measured(1.0, 2.0, 10) + Cost::measured(3.0, 5.0, 10);
  EXPECT_DOUBLE_EQ(sum.seconds(), 4.0);
  EXPECT_DOUBLE_EQ(sum.p90_seconds(), 7.0);
  EXPECT_FALSE(sum.is_measured());
}

TEST(CostTest, PrintsInTheLargestFittingUnit) {
  EXPECT_EQ(Cost::value(0.00125).to_string(), "1.25 ms");
  EXPECT_EQ(Cost::value(2.5e-6).to_string(), "2.50 us");
  EXPECT_EQ(Cost::invalid("no kernel").to_string(), "invalid: no kernel");
}

TEST(CostTest, NaNIsNeverACost) {
#ifdef NDEBUG
  EXPECT_FALSE(Cost::value(std::nan("")).is_valid());
#else
  EXPECT_DEATH(Cost::value(std::nan("")), "never NaN");
#endif
}

}  // namespace
}  // namespace collage
