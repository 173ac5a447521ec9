#include "collage/plan/plan_profile.h"

#include <gtest/gtest.h>

#include "collage/ir/error.h"

namespace collage {
namespace {

Plan two_partition_plan() {
  Plan plan;
  plan.partitions.resize(2);
  plan.partitions[0].backend = "xnnpack";
  plan.partitions[0].ops = {"Conv"};
  plan.partitions[0].estimated_ms = 0.100;
  plan.partitions[1].backend = "native";
  plan.partitions[1].ops = {"Relu"};
  plan.partitions[1].estimated_ms = 0.010;
  plan.estimated_ms = 0.110;
  return plan;
}

TraceSpan span(SpanKind kind, int run, int partition, double us) {
  return TraceSpan{
      .name = "s", .kind = kind, .duration_us = us, .run = run, .partition = partition};
}

// Three runs: the first is warm-up; xnnpack takes 150/160/170 us with a
// 40 us layout conversion inside, native 30 us, runs 200 us end to end.
std::vector<TraceSpan> three_runs() {
  std::vector<TraceSpan> spans;
  for (int run = 0; run < 3; ++run) {
    spans.push_back(span(SpanKind::kPartition, run, 0, 150 + 10 * run));
    spans.push_back(span(SpanKind::kLayout, run, 0, 40));
    spans.push_back(span(SpanKind::kPartition, run, 1, 30));
    spans.push_back(span(SpanKind::kAllocate, run, -1, 2));
    spans.push_back(span(SpanKind::kRun, run, -1, 200 + 10 * run));
  }
  return spans;
}

TEST(PlanProfileTest, PartitionsGetTheirInContextMedianBesideTheirEstimate) {
  PlanProfile profile = profile_plan(two_partition_plan(), three_runs(), 1);
  EXPECT_EQ(profile.runs, 2);
  ASSERT_EQ(profile.partitions.size(), 2u);
  EXPECT_NEAR(profile.partitions[0].in_context_ms, 0.165, 1e-9);
  EXPECT_NEAR(profile.partitions[0].layout_ms, 0.040, 1e-9);
  EXPECT_NEAR(*profile.partitions[0].gap_ms(), 0.065, 1e-9);
  EXPECT_EQ(profile.partitions[1].previous_backend, "xnnpack");
  EXPECT_NEAR(*profile.partitions[1].gap_ms(), 0.020, 1e-9);
  EXPECT_NEAR(profile.run_median_ms, 0.215, 1e-9);
}

double boundary_ms(const PlanProfile& profile, const std::string& kind) {
  for (const BoundaryTotal& b : profile.boundaries) {
    if (b.kind == kind) return b.ms_per_run;
  }
  ADD_FAILURE() << "no boundary kind " << kind;
  return 0.0;
}

TEST(PlanProfileTest, TheTimeBetweenKernelsIsTheRunLessKernelsAndAllocations) {
  PlanProfile profile = profile_plan(two_partition_plan(), three_runs(), 1);
  auto total = [&](const std::string& kind) { return boundary_ms(profile, kind); };
  // 215 - (165 + 30) - 2 us.
  EXPECT_NEAR(total("between kernels (executor)"), 0.018, 1e-9);
  EXPECT_NEAR(total("layout conversion (inside kernels)"), 0.040, 1e-9);
  EXPECT_NEAR(total("in-context excess after xnnpack -> native"), 0.020, 1e-9);
}

TEST(PlanProfileTest, UntracedKernelSumsSplitTheTimeBetweenKernelsFromTheirVariation) {
  // The partitions' typical times sum to 195 us; the untraced runs take
  // 240-260 us, of which 225-245 us in kernels: 15 us outside them (2 us of
  // it allocating), and 40 us more in kernels than their typical times.
  PlanProfile profile = profile_plan(two_partition_plan(), three_runs(), 1);
  leave_out_tracing(
      profile, UntracedRuns{.run_ms = {0.250, 0.260, 0.240}, .kernels_ms = {0.235, 0.245, 0.225}});
  EXPECT_NEAR(profile.run_median_ms, 0.250, 1e-9);
  EXPECT_NEAR(boundary_ms(profile, "between kernels (executor)"), 0.013, 1e-9);
  EXPECT_NEAR(boundary_ms(profile, "kernels' run-to-run variation"), 0.040, 1e-9);
  double beyond = 0;
  for (const BoundaryTotal& b : profile.boundaries) {
    if (is_beyond_partitions(b)) beyond += b.ms_per_run;
  }
  EXPECT_NEAR(beyond, 0.250 - 0.195, 1e-9);
  EXPECT_NE(profile_to_text(profile).find("kernels' run-to-run variation"), std::string::npos);
}

TEST(PlanProfileTest, WithoutKernelSumsAllTheRunLeavesFallsBetweenKernels) {
  PlanProfile profile = profile_plan(two_partition_plan(), three_runs(), 1);
  leave_out_tracing(profile, 0.250);
  EXPECT_NEAR(boundary_ms(profile, "between kernels (executor)"), 0.053, 1e-9);
  for (const BoundaryTotal& b : profile.boundaries) {
    EXPECT_NE(b.kind, "kernels' run-to-run variation");
  }
}

TEST(PlanProfileTest, TheSummaryListsTheLargestGapFirst) {
  std::string text = profile_to_text(profile_plan(two_partition_plan(), three_runs(), 1), 1);
  std::size_t top = text.find("top 1 gaps");
  ASSERT_NE(top, std::string::npos) << text;
  EXPECT_NE(text.find("#0", top), std::string::npos) << text;
  EXPECT_EQ(text.find("#1 ", top), std::string::npos) << text;
}

TEST(PlanProfileTest, ATraceOfAnotherPlanIsAnError) {
  Plan plan = two_partition_plan();
  std::vector<TraceSpan> spans = {span(SpanKind::kPartition, 0, 5, 10)};
  EXPECT_THROW(profile_plan(plan, spans), Error);
  EXPECT_THROW(profile_plan(plan, {}), Error);
}

TEST(PlanProfileTest, OverheadsAreTheInContextExcessWithTheChargeTakenOff) {
  PlanProfile profile = profile_plan(two_partition_plan(), three_runs(), 1);
  PartitionOverheads charged;
  charged.seconds["native"] = 4e-6;  // already in native's 10 us estimate
  PartitionOverheads observed = observed_overheads(as_plan_run(profile), charged);
  // Each partition also gets half of the 18 + 2 us between kernels.
  // xnnpack: 165 - 100 + 10 us.
  EXPECT_NEAR(observed.of("xnnpack"), 75e-6, 1e-12);
  // native: 30 - (10 - 4) + 10 = 34 us.
  EXPECT_NEAR(observed.of("native"), 34e-6, 1e-12);
}

TEST(PlanProfileTest, ABackendThePlanDoesNotUseIsNotObserved) {
  PlanProfile profile = profile_plan(two_partition_plan(), three_runs(), 1);
  PartitionOverheads charged;
  charged.seconds["native"] = 4e-6;
  charged.seconds["onednn"] = 7e-6;  // not in the plan
  PartitionOverheads observed = observed_overheads(as_plan_run(profile), charged);
  EXPECT_NEAR(observed.of("native"), 34e-6, 1e-12);
  EXPECT_EQ(observed.seconds.count("onednn"), 0U);
}

TEST(PlanProfileTest, TheMedianPartitionSetsTheOverheadNotTheLargestExcess) {
  // Three oneDNN partitions 2, 3 and 900 us over their estimates (the last
  // one ran while the machine was busy): the charge is 3 us, not the mean.
  PlanProfile profile;
  for (double excess_us : {2.0, 900.0, 3.0}) {
    PartitionProfile row;
    row.backend = "onednn";
    row.estimated_ms = 0.1;
    row.in_context_ms = 0.1 + excess_us / 1e3;
    profile.partitions.push_back(row);
  }
  PartitionOverheads observed = observed_overheads(as_plan_run(profile), PartitionOverheads{});
  EXPECT_NEAR(observed.of("onednn"), 3e-6, 1e-12);
}

TEST(PlanProfileTest, NoChargeExceedsTheRunOverTheBackendsPartitions) {
  // Two oneDNN partitions read 3.3 ms over their estimates in a plan that
  // ran 0.05 ms end to end (a disturbed profile): together they cannot have
  // cost more than the run, so each is charged at most half of it.
  PlanProfile profile;
  profile.run_median_ms = 0.05;
  for (int i = 0; i < 2; ++i) {
    PartitionProfile row;
    row.backend = "onednn";
    row.estimated_ms = 0.01;
    row.in_context_ms = 3.31;
    profile.partitions.push_back(row);
  }
  PartitionOverheads observed =
      observed_overheads(as_plan_run(profile), PartitionOverheads{}, PartsTimed::kWithProfile);
  EXPECT_NEAR(observed.of("onednn"), 25e-6, 1e-12);
}

// A partition estimated at `isolated_ms` that ran `slower` times that plus
// `extra_ms` in context.
void add_partition(PlanProfile& profile, const char* backend, double isolated_ms, double slower,
                   double extra_ms) {
  PartitionProfile row;
  row.backend = backend;
  row.estimated_ms = isolated_ms;
  row.in_context_ms = slower * isolated_ms + extra_ms;
  profile.partitions.push_back(row);
}

TEST(PlanProfileTest, AMachineRunningSlowerThanWhenMeasuringIsNotAnOverhead) {
  // The whole plan ran 1.3x slower than its candidates were measured; the
  // small native partitions also paid 4 us each beyond that.
  PlanProfile profile;
  for (double ms : {0.4, 1.0, 2.5}) add_partition(profile, "onednn", ms, 1.3, 0.0);
  for (int i = 0; i < 3; ++i) add_partition(profile, "native", 0.02, 1.3, 0.004);
  PartitionOverheads observed = observed_overheads(as_plan_run(profile), PartitionOverheads{});
  EXPECT_NEAR(observed.of("onednn"), 0.0, 1e-9);
  EXPECT_NEAR(observed.of("native"), 4e-6, 1e-9);

  // With fewer than three partitions large enough to tell the machine's
  // speed, the large ones tell nothing (their 0.3 and 0.75 ms over are the
  // machine's), and the small ones' excess is taken as it is.
  profile.partitions.erase(profile.partitions.begin());
  observed = observed_overheads(as_plan_run(profile), PartitionOverheads{});
  EXPECT_NEAR(observed.of("onednn"), 0.0, 1e-9);
  EXPECT_NEAR(observed.of("native"), 10e-6, 1e-9);
}

TEST(PlanProfileTest, PartsTimedWithTheProfileTeachTheirExcessAsItIs) {
  // Two large XNNPACK partitions and one small native one, their parts
  // timed again beside the runs: no scale is guessed, and the large ones,
  // which would tell nothing without a known speed, teach their excess.
  PlanProfile profile;
  add_partition(profile, "xnnpack", 1.0, 1.0, 0.010);
  add_partition(profile, "xnnpack", 1.5, 1.0, 0.030);
  add_partition(profile, "native", 0.02, 1.0, 0.004);
  PartitionOverheads observed =
      observed_overheads(as_plan_run(profile), PartitionOverheads{}, PartsTimed::kWithProfile);
  EXPECT_NEAR(observed.of("xnnpack"), 20e-6, 1e-9);
  EXPECT_NEAR(observed.of("native"), 4e-6, 1e-9);
  // Timed when searched, the same profile leaves the large ones out.
  observed = observed_overheads(as_plan_run(profile), PartitionOverheads{});
  EXPECT_NEAR(observed.of("xnnpack"), 0.0, 1e-9);
  EXPECT_NEAR(observed.of("native"), 4e-6, 1e-9);
}

TEST(PlanProfileTest, OneProfileReadingHighDoesNotSetTheCharge) {
  // Three profiles of one model's tune; the second, taken while the
  // machine slowed between its runs and the timing of its parts, reads
  // XNNPACK's overhead ten times too high; from the third on, the median
  // leaves it out. No profile used halide.
  auto round = [](std::map<std::string, double> seconds) {
    PartitionOverheads overheads;
    overheads.seconds = std::move(seconds);
    return overheads;
  };
  const std::vector<std::string> backends = {"native", "xnnpack", "halide"};
  std::vector<PartitionOverheads> rounds = {round({{"xnnpack", 3e-6}, {"native", 1e-6}}),
                                            round({{"xnnpack", 30e-6}})};
  // With two, their mean.
  PartitionOverheads charged = overheads_over_rounds(rounds, backends);
  EXPECT_DOUBLE_EQ(charged.of("xnnpack"), 16.5e-6);
  EXPECT_DOUBLE_EQ(charged.of("native"), 1e-6);
  EXPECT_DOUBLE_EQ(charged.of("halide"), 0.0);
  EXPECT_EQ(charged.seconds.count("halide"), 1U);
  rounds.push_back(round({{"xnnpack", 5e-6}, {"native", 2e-6}}));
  charged = overheads_over_rounds(rounds, backends);
  EXPECT_DOUBLE_EQ(charged.of("xnnpack"), 5e-6);
  EXPECT_DOUBLE_EQ(charged.of("native"), 1.5e-6);
}

TEST(PlanProfileTest, FittedChargesSplitTheRunsExcessAsTheMediansDo) {
  // Parts timed with the profile: onednn's two partitions run 6 and 8 us
  // over their parts (median 7), xnnpack's 2 and 4 (median 3); 20 us of
  // excess by the medians. The untraced runs show 40 us over the parts
  // (tracing and the time between kernels spread over them), so both
  // charges double. Charged 1 us per onednn partition already.
  PlanProfile profile;
  add_partition(profile, "onednn", 0.101, 1.0, 0.005);
  add_partition(profile, "onednn", 0.051, 1.0, 0.007);
  add_partition(profile, "xnnpack", 0.020, 1.0, 0.002);
  add_partition(profile, "xnnpack", 0.030, 1.0, 0.004);
  profile.run_median_ms = 0.100 + 0.050 + 0.020 + 0.030 + 0.040;
  PartitionOverheads charged;
  charged.seconds["onednn"] = 1e-6;
  PartitionOverheads fitted = overheads_fitting_the_run(as_plan_run(profile), charged);
  EXPECT_NEAR(fitted.of("onednn"), 14e-6, 1e-9);
  EXPECT_NEAR(fitted.of("xnnpack"), 6e-6, 1e-9);
  EXPECT_EQ(fitted.seconds.size(), 2U);
}

TEST(PlanProfileTest, APlanRunningFasterThanItsPartsIsChargedNothing) {
  PlanProfile profile;
  add_partition(profile, "onednn", 0.100, 1.0, 0.010);
  add_partition(profile, "xnnpack", 0.100, 1.0, 0.010);
  profile.run_median_ms = 0.190;
  PartitionOverheads fitted = overheads_fitting_the_run(as_plan_run(profile), PartitionOverheads{});
  EXPECT_DOUBLE_EQ(fitted.of("onednn"), 0.0);
  EXPECT_DOUBLE_EQ(fitted.of("xnnpack"), 0.0);
  EXPECT_EQ(fitted.seconds.size(), 2U);
}

TEST(PlanProfileTest, AnExcessNoPartitionShowsIsSharedPerPartition) {
  // Every partition ran as its part; the 30 us the runs show beyond them
  // fell between kernels, and the three partitions share it.
  PlanProfile profile;
  add_partition(profile, "onednn", 0.100, 1.0, 0.0);
  add_partition(profile, "onednn", 0.100, 1.0, 0.0);
  add_partition(profile, "xnnpack", 0.100, 1.0, 0.0);
  profile.run_median_ms = 0.330;
  PartitionOverheads fitted = overheads_fitting_the_run(as_plan_run(profile), PartitionOverheads{});
  EXPECT_NEAR(fitted.of("onednn"), 10e-6, 1e-9);
  EXPECT_NEAR(fitted.of("xnnpack"), 10e-6, 1e-9);
}

TEST(PlanProfileTest, ASwitchOfBackendIsAnOverheadNotTheMachinesSpeed) {
  // Partitions that follow one of their own backend run as measured; the
  // ones right after another backend's run 1.5x slower. The machine's
  // speed is read from the first kind, so the switches' excess is learned.
  PlanProfile profile;
  auto add = [&](const char* previous, const char* backend, double isolated_ms, double factor) {
    PartitionProfile row;
    row.previous_backend = previous;
    row.backend = backend;
    row.estimated_ms = isolated_ms;
    row.in_context_ms = factor * isolated_ms;
    profile.partitions.push_back(row);
  };
  add("", "onednn", 1.0, 1.0);
  add("onednn", "onednn", 0.5, 1.0);
  add("onednn", "onednn", 0.8, 1.0);
  for (int i = 0; i < 4; ++i) {
    add("onednn", "xnnpack", 0.4, 1.5);
    add("xnnpack", "onednn", 0.4, 1.5);
  }
  PartitionOverheads observed = observed_overheads(as_plan_run(profile), PartitionOverheads{});
  EXPECT_NEAR(observed.of("xnnpack"), 0.2e-3, 1e-9);
  EXPECT_NEAR(observed.of("onednn"), 0.2e-3, 1e-9);
}

TEST(PlanProfileTest, AnnotatingAPlanFillsEachPartitionsMeasuredTime) {
  Plan plan = two_partition_plan();
  annotate_plan(plan, profile_plan(plan, three_runs(), 1));
  ASSERT_TRUE(plan.partitions[0].measured_ms);
  EXPECT_NEAR(*plan.partitions[0].measured_ms, 0.165, 1e-9);
}

}  // namespace
}  // namespace collage
