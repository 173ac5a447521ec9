#include "collage/runtime/interleaved_timing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace collage {
namespace {

TEST(InterleavedTimingTest, EachVariantIsTimedOncePerRoundInTurn) {
  std::vector<int> calls;
  std::vector<std::function<void()>> variants = {[&] { calls.push_back(0); },
                                                 [&] { calls.push_back(1); }};
  std::vector<TimingResult> results = time_interleaved(variants, 3, 1, 0);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].samples, 3);
  EXPECT_EQ(results[1].samples, 3);
  // Warm-up round, then three timed rounds, always A then B.
  EXPECT_EQ(calls, (std::vector<int>{0, 1, 0, 1, 0, 1, 0, 1}));
}

TEST(InterleavedTimingTest, EachTimedCallFollowsAnUntimedCallOfTheSameVariant) {
  std::vector<int> calls;
  std::vector<std::function<void()>> variants = {[&] { calls.push_back(0); },
                                                 [&] { calls.push_back(1); }};
  std::vector<TimingResult> results = time_interleaved(variants, 2, 0);
  EXPECT_EQ(results[0].samples, 2);
  // By default one settling call before each timed one: A A B B A A B B.
  EXPECT_EQ(calls, (std::vector<int>{0, 0, 1, 1, 0, 0, 1, 1}));
}

TEST(InterleavedTimingTest, SettlingLastsAtLeastSettleSecondsBeforeEachTimedCall) {
  // Calls of at least 1 ms, settled for 5 ms: each of the three rounds
  // takes at least 5 ms of untimed calls and one timed call (one settling
  // call alone would make the whole 6 ms).
  int calls = 0;
  auto sleep_a_millisecond = [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ++calls;
  };
  const auto start = std::chrono::steady_clock::now();
  std::vector<TimingResult> results = time_interleaved({sleep_a_millisecond}, 3, 0, 1, 0.005);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(results[0].samples, 3);
  EXPECT_GE(elapsed, 3 * (0.005 + 0.001));
  EXPECT_GE(calls, 3 * 2);
}

TEST(InterleavedTimingTest, ASlowerVariantHasTheLargerMedian) {
  std::vector<std::function<void()>> variants = {
      [] { std::this_thread::sleep_for(std::chrono::microseconds(200)); },
      [] { std::this_thread::sleep_for(std::chrono::milliseconds(3)); }};
  std::vector<TimingResult> results = time_interleaved(variants, 5, 1);
  EXPECT_LT(results[0].median_seconds, results[1].median_seconds);
}

TEST(InterleavedTimingTest, WarmUpCallsAreNotSampled) {
  int calls = 0;
  std::vector<TimingResult> results = time_interleaved({[&] { ++calls; }}, 3, 2);
  ASSERT_EQ(results.size(), 1u);
  // Two warm-up calls, then three rounds of a settling and a timed call.
  EXPECT_EQ(calls, 8);
  EXPECT_EQ(results[0].samples, 3);
  EXPECT_EQ(results[0].sample_seconds.size(), 3u);
}

TEST(InterleavedTimingTest, EachResultSummarizesItsOwnSamples) {
  std::vector<std::function<void()>> variants = {
      [] {}, [] { std::this_thread::sleep_for(std::chrono::microseconds(100)); }};
  std::vector<TimingResult> results = time_interleaved(variants, 4, 0);
  for (const TimingResult& result : results) {
    ASSERT_EQ(result.sample_seconds.size(), 4u);
    EXPECT_EQ(result.min_seconds,
              *std::min_element(result.sample_seconds.begin(), result.sample_seconds.end()));
    EXPECT_EQ(result.max_seconds,
              *std::max_element(result.sample_seconds.begin(), result.sample_seconds.end()));
    EXPECT_LE(result.min_seconds, result.median_seconds);
    EXPECT_LE(result.median_seconds, result.max_seconds);
  }
}

TEST(InterleavedTimingTest, NoVariantsGiveNoResults) {
  EXPECT_TRUE(time_interleaved({}, 3, 1).empty());
}

}  // namespace
}  // namespace collage
