#include "collage/partition/index_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <unordered_set>

namespace collage {
namespace {

TEST(IndexSetTest, UnionIntersectionAndDifferenceWorkMemberwise) {
  IndexSet a(10, {1, 2, 3});
  IndexSet b(10, {3, 4});
  EXPECT_EQ(a | b, IndexSet(10, {1, 2, 3, 4}));
  EXPECT_EQ(a & b, IndexSet(10, {3}));
  EXPECT_EQ(a - b, IndexSet(10, {1, 2}));
}

TEST(IndexSetTest, IntersectsAndSubsetCompareMembers) {
  IndexSet a(100, {1, 70});
  IndexSet b(100, {1, 70, 99});
  EXPECT_TRUE(a.intersects(b));
  EXPECT_FALSE(a.intersects(IndexSet(100, {2, 71})));
  EXPECT_TRUE(a.is_subset(b));
  EXPECT_TRUE(a.is_strict_subset(b));
  EXPECT_FALSE(b.is_subset(a));
  EXPECT_FALSE(b.is_strict_subset(b));
}

TEST(IndexSetTest, FirstOutsideSkipsWholeWordsOfMembers) {
  IndexSet set = IndexSet::all(130);
  set.remove(128);
  EXPECT_EQ(set.first_outside(), 128u);
  EXPECT_EQ(IndexSet(130).first_outside(), 0u);
  EXPECT_EQ(set.first_outside(129), std::nullopt);
}

TEST(IndexSetTest, FirstOutsideOfAFullSetIsNothing) {
  EXPECT_EQ(IndexSet::all(64).first_outside(), std::nullopt);
  EXPECT_EQ(IndexSet::all(65).first_outside(), std::nullopt);
}

TEST(IndexSetTest, FirstAndLastInsideFindExtremeMembers) {
  IndexSet set(200, {5, 64, 190});
  EXPECT_EQ(set.first_inside(), 5u);
  EXPECT_EQ(set.first_inside(6), 64u);
  EXPECT_EQ(set.last_inside(), 190u);
  EXPECT_EQ(IndexSet(200).last_inside(), std::nullopt);
}

TEST(IndexSetTest, IterationVisitsMembersInIncreasingOrder) {
  IndexSet set(150, {149, 0, 63, 64});
  EXPECT_EQ(set.to_vector(), (std::vector<PostDfsIndex>{0, 63, 64, 149}));
  EXPECT_EQ(set.popcount(), 4u);
  EXPECT_EQ(set.to_string(), "{0,63,64,149}");
}

TEST(IndexSetTest, EqualSetsHashEqually) {
  IndexSet a(70, {3, 69});
  IndexSet b(70);
  b.add(69);
  b.add(3);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
  std::unordered_set<IndexSet> seen = {a};
  EXPECT_TRUE(seen.count(b));
}

TEST(IndexSetTest, AllHasExactlyTheUniverse) {
  IndexSet all = IndexSet::all(70);
  EXPECT_EQ(all.popcount(), 70u);
  IndexSet built(70);
  for (PostDfsIndex i = 0; i < 70; ++i) built.add(i);
  EXPECT_EQ(all, built);
}

TEST(IndexSetTest, OrderingPutsTheSetWithTheSmallestDifferingMemberFirst) {
  IndexSet a(10, {0, 1});
  IndexSet b(10, {0, 2});
  IndexSet c(10, {0});
  EXPECT_LT(a, b);
  EXPECT_LT(a, c);
  EXPECT_LT(b, c);
  std::vector<IndexSet> sets = {c, b, a};
  std::sort(sets.begin(), sets.end());
  EXPECT_EQ(sets, (std::vector<IndexSet>{a, b, c}));
}

}  // namespace
}  // namespace collage
