#include "collage/runtime/timing.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace collage {
namespace {

TEST(TimingTest, PercentileInterpolatesBetweenSortedSamples) {
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 1.0), 4.0);
}

TEST(TimingTest, SummarizeReportsMedianSpreadAndCount) {
  TimingResult r = summarize({5, 1, 3, 2, 4});
  EXPECT_DOUBLE_EQ(r.median_seconds, 3);
  EXPECT_DOUBLE_EQ(r.min_seconds, 1);
  EXPECT_DOUBLE_EQ(r.max_seconds, 5);
  EXPECT_EQ(r.samples, 5);
  EXPECT_LE(r.p10_seconds, r.median_seconds);
  EXPECT_GE(r.p90_seconds, r.median_seconds);
  // The slowest of five is dropped: (1 + 2 + 3 + 4) / 4.
  EXPECT_DOUBLE_EQ(r.trimmed_mean_seconds, 2.5);
}

TEST(TimingTest, TrimmedMeanDropsTheSlowestTenthAndKeepsASkewThatAMedianHides) {
  // Fewer than five samples: the plain mean.
  EXPECT_DOUBLE_EQ(trimmed_mean({1, 2, 6}), 3);
  EXPECT_DOUBLE_EQ(trimmed_mean({}), 0);
  // One preempted sample of seven does not move it.
  EXPECT_DOUBLE_EQ(trimmed_mean({1, 1, 1, 1, 1, 1, 1000}), 1);
  // Twenty samples: the slowest two go. A right-skewed time (half the runs
  // at 10, the rest slower) has its median at the fast mode; the trimmed
  // mean keeps the skew.
  std::vector<double> skewed(10, 10.0);
  for (int i = 0; i < 8; ++i) skewed.push_back(12.0 + i);
  skewed.push_back(500.0);
  skewed.push_back(900.0);
  EXPECT_DOUBLE_EQ(trimmed_mean(skewed), (10 * 10.0 + 8 * 15.5) / 18);
  EXPECT_GT(trimmed_mean(skewed), percentile(skewed, 0.5));
}

TEST(TimingTest, MeasuresASleepCloseToItsLength) {
  TimingOptions options;
  options.budget_seconds = 0.2;
  TimingResult r =
      time_function([] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }, options);
  EXPECT_GE(r.samples, options.min_samples);
  EXPECT_GE(r.median_seconds, 0.0019);
  EXPECT_LT(r.median_seconds, 0.02);
}

TEST(TimingTest, ShortCallsAreBatchedAndTimedPerCall) {
  int calls = 0;
  TimingOptions options;
  options.budget_seconds = 0.05;
  TimingResult r = time_function([&] { ++calls; }, options);
  // Batching makes many calls per sample.
  EXPECT_GT(calls, r.samples * 10);
  EXPECT_LT(r.median_seconds, 1e-5);
}

TEST(TimingTest, SamplingStopsAtTheBudget) {
  TimingOptions options;
  options.budget_seconds = 0.05;
  options.max_samples = 100000;
  options.stable_fraction = 0;  // never "stable": only the budget can stop it
  auto start = std::chrono::steady_clock::now();
  time_function([] { std::this_thread::sleep_for(std::chrono::microseconds(500)); }, options);
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(elapsed, 1.0);
}

TEST(TimingTest, WhatRunsBeforeEachCallPrecedesEveryCallUntimedAndCallsAreNotBatched) {
  int calls = 0;
  int prepared = 0;
  bool prepared_before_every_call = true;
  TimingOptions options;
  options.budget_seconds = 0.05;
  options.warmup_seconds = 0;
  TimingResult r = time_function(
      [&] {
        prepared_before_every_call &= prepared == calls + 1;
        ++calls;
      },
      options,
      [&] {
        ++prepared;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      });
  EXPECT_TRUE(prepared_before_every_call);
  EXPECT_EQ(prepared, calls);
  // One call per sample, after the warm-ups; the sleeps are not timed.
  EXPECT_EQ(calls, r.samples + options.warmup_runs);
  EXPECT_LT(r.median_seconds, 5e-4);
}

}  // namespace
}  // namespace collage
