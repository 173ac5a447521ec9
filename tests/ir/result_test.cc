#include "collage/ir/result.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace collage {
namespace {

Result<int> half(int n) {
  if (n % 2 != 0) return Failure{std::to_string(n) + " is odd"};
  return n / 2;
}

TEST(ResultTest, AValueIsOkAndReadsBack) {
  Result<int> result = half(8);
  EXPECT_TRUE(result.ok());
  EXPECT_TRUE(static_cast<bool>(result));
  EXPECT_EQ(result.value(), 4);
  EXPECT_EQ(*result, 4);
}

TEST(ResultTest, AFailureIsNotOkAndKeepsItsReason) {
  Result<int> result = half(7);
  EXPECT_FALSE(result.ok());
  EXPECT_FALSE(static_cast<bool>(result));
  EXPECT_EQ(result.error(), "7 is odd");
}

TEST(ResultTest, TheValueCanBeChangedAndMovedOut) {
  Result<std::vector<int>> result = std::vector<int>{1, 2};
  result->push_back(3);
  std::vector<int> taken = std::move(result.value());
  EXPECT_EQ(taken, (std::vector<int>{1, 2, 3}));
}

TEST(ResultTest, HoldsAValueThatCannotBeCopied) {
  Result<std::unique_ptr<int>> result = std::make_unique<int>(5);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(**result, 5);
}

}  // namespace
}  // namespace collage
