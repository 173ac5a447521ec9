#include "collage/plan/plan_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include "collage/ir/error.h"
#include "collage/plan/plan_compiler.h"
#include "collage/plan/plan_report.h"
#include "collage/runtime/timing.h"

namespace collage {
namespace {

constexpr const char* kAllocationKind = "allocation (executor)";
constexpr const char* kBetweenKind = "between kernels (executor)";
constexpr const char* kVariationKind = "kernels' run-to-run variation";

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

// What the spans of a plan's runs add up to, per run (ms).
struct RunTimes {
  // Per partition, per run: its kernel time and the work inside it.
  std::vector<std::vector<double>> kernel;
  std::vector<std::vector<double>> layout;
  std::vector<std::vector<double>> copy;
  // Per run: its wall time and its allocations.
  std::vector<double> wall;
  std::vector<double> allocate;
  // How many spans of each kind the first run has.
  std::map<SpanKind, int> spans_of_kind;
};

RunTimes times_per_run(std::size_t partitions, const std::vector<TraceSpan>& spans, int first_run,
                       int runs) {
  auto per_run = [&](std::size_t rows) {
    return std::vector<std::vector<double>>(rows, std::vector<double>(runs, 0.0));
  };
  RunTimes times{per_run(partitions),
                 per_run(partitions),
                 per_run(partitions),
                 std::vector<double>(runs, 0.0),
                 std::vector<double>(runs, 0.0),
                 {}};
  for (const TraceSpan& span : spans) {
    if (span.run < first_run) continue;
    const auto r = static_cast<std::size_t>(span.run - first_run);
    const double span_ms = span.duration_us / 1e3;
    if (span.partition >= static_cast<int>(partitions)) {
      throw Error(fmt::format("the trace names partition {}, but the plan has {}", span.partition,
                              partitions));
    }
    if (span.run == first_run) ++times.spans_of_kind[span.kind];
    const auto p = static_cast<std::size_t>(std::max(span.partition, 0));
    switch (span.kind) {
      case SpanKind::kRun:
        times.wall[r] += span_ms;
        break;
      case SpanKind::kAllocate:
        times.allocate[r] += span_ms;
        break;
      case SpanKind::kPartition:
        times.kernel[p][r] += span_ms;
        break;
      case SpanKind::kLayout:
        times.layout[p][r] += span_ms;
        break;
      case SpanKind::kCopy:
        times.copy[p][r] += span_ms;
        break;
      case SpanKind::kDispatch:
      case SpanKind::kOp:  // inside its partition's span
        break;
    }
  }
  return times;
}

// One row per partition of `plan`: its in-context time (the trimmed mean
// of its kernel's runs) beside its estimate.
void add_partition_rows(PlanProfile& profile, const Plan& plan, const RunTimes& times) {
  for (std::size_t p = 0; p < plan.partitions.size(); ++p) {
    const PlanPartition& partition = plan.partitions[p];
    PartitionProfile row;
    row.index = static_cast<int>(p);
    row.backend = partition.backend;
    row.previous_backend = p == 0 ? "" : plan.partitions[p - 1].backend;
    row.ops = fmt::format("{}", fmt::join(partition.ops, "+"));
    row.estimated_ms = partition.estimated_ms;
    row.in_context_ms = trimmed_mean(times.kernel[p]);
    row.layout_ms = median(times.layout[p]);
    row.copy_ms = median(times.copy[p]);
    profile.partitions_ms += row.in_context_ms;
    profile.partitions.push_back(std::move(row));
  }
}

// The boundary lines: the work inside kernels, allocation and the time
// between kernels (medians over runs), then the in-context excess over the
// estimate by backend pair: what a switch from one backend to the next
// costs beyond the kernels timed alone.
void add_boundaries(PlanProfile& profile, const RunTimes& times) {
  const std::size_t runs = times.wall.size();
  std::vector<double> between(runs, 0.0);
  std::vector<double> layout_total(runs, 0.0);
  std::vector<double> copy_total(runs, 0.0);
  for (std::size_t r = 0; r < runs; ++r) {
    double kernels = 0;
    for (std::size_t p = 0; p < times.kernel.size(); ++p) {
      kernels += times.kernel[p][r];
      layout_total[r] += times.layout[p][r];
      copy_total[r] += times.copy[p][r];
    }
    between[r] = std::max(0.0, times.wall[r] - kernels - times.allocate[r]);
  }
  const std::map<SpanKind, int>& spans = times.spans_of_kind;
  auto count = [&](SpanKind kind) {
    auto found = spans.find(kind);
    return found == spans.end() ? 0 : found->second;
  };
  profile.boundaries.push_back(
      {"layout conversion (inside kernels)", median(layout_total), count(SpanKind::kLayout)});
  profile.boundaries.push_back(
      {"staging copy (inside kernels)", median(copy_total), count(SpanKind::kCopy)});
  profile.boundaries.push_back(
      {kAllocationKind, median(times.allocate), count(SpanKind::kAllocate)});
  profile.boundaries.push_back({kBetweenKind, median(between), 0});
  std::map<std::string, std::pair<double, int>> by_pair;
  for (const PartitionProfile& row : profile.partitions) {
    std::optional<double> gap = row.gap_ms();
    if (!gap) continue;
    std::string key =
        fmt::format("in-context excess after {} -> {}",
                    row.previous_backend.empty() ? "start" : row.previous_backend, row.backend);
    by_pair[key].first += *gap;
    by_pair[key].second += 1;
  }
  for (const auto& [key, total] : by_pair) {
    profile.boundaries.push_back({key, total.first, total.second});
  }
}

}  // namespace

PlanProfile profile_plan(const Plan& plan, const std::vector<TraceSpan>& spans, int first_run) {
  int last_run = first_run - 1;
  for (const TraceSpan& span : spans) last_run = std::max(last_run, span.run);
  const int runs = last_run - first_run + 1;
  if (runs <= 0) throw Error("the trace holds no run of the plan");
  const RunTimes times = times_per_run(plan.partitions.size(), spans, first_run, runs);
  PlanProfile profile;
  profile.runs = runs;
  profile.run_median_ms = median(times.wall);
  profile.estimated_ms = plan.estimated_ms;
  add_partition_rows(profile, plan, times);
  add_boundaries(profile, times);
  return profile;
}

void leave_out_tracing(PlanProfile& profile, const UntracedRuns& untraced) {
  if (profile.traced_run_median_ms || untraced.run_ms.empty()) return;
  const double untraced_ms = median(untraced.run_ms);
  profile.traced_run_median_ms = profile.run_median_ms;
  double allocation_ms = 0;
  for (const BoundaryTotal& total : profile.boundaries) {
    if (total.kind == kAllocationKind) allocation_ms += total.ms_per_run;
  }
  // All the untraced median leaves beyond the partitions and allocations.
  const double beyond_ms = std::max(0.0, untraced_ms - profile.partitions_ms - allocation_ms);
  double between_ms = beyond_ms;
  std::optional<double> variation_ms;
  if (!untraced.kernels_ms.empty() && untraced.kernels_ms.size() == untraced.run_ms.size()) {
    std::vector<double> outside(untraced.run_ms.size());
    for (std::size_t i = 0; i < outside.size(); ++i) {
      outside[i] = untraced.run_ms[i] - untraced.kernels_ms[i];
    }
    between_ms = std::clamp(median(std::move(outside)) - allocation_ms, 0.0, beyond_ms);
    variation_ms = beyond_ms - between_ms;
  }
  auto at = std::find_if(profile.boundaries.begin(), profile.boundaries.end(),
                         [](const BoundaryTotal& total) { return total.kind == kBetweenKind; });
  if (at != profile.boundaries.end()) {
    at->ms_per_run = between_ms;
    ++at;
  }
  // The variation is listed right after the time between kernels.
  if (variation_ms) profile.boundaries.insert(at, {kVariationKind, *variation_ms, 0});
  profile.boundaries.push_back(
      {"tracing (left out)", std::max(0.0, profile.run_median_ms - untraced_ms), 0});
  profile.run_median_ms = untraced_ms;
}

void leave_out_tracing(PlanProfile& profile, double untraced_ms) {
  leave_out_tracing(profile, UntracedRuns{.run_ms = {untraced_ms}, .kernels_ms = {}});
}

bool is_beyond_partitions(const BoundaryTotal& total) {
  return total.kind == kBetweenKind || total.kind == kAllocationKind ||
         total.kind == kVariationKind;
}

std::string profile_to_text(const PlanProfile& profile, int top) {
  std::string text;
  text += fmt::format(
      "profile over {} run{}: end to end {} ms (median{}), partitions in context {} ms, "
      "estimated {} ms\n",
      profile.runs, profile.runs == 1 ? "" : "s", ms_column(profile.run_median_ms),
      profile.traced_run_median_ms
          ? fmt::format(" untraced; traced {} ms", ms_column(*profile.traced_run_median_ms))
          : "",
      ms_column(profile.partitions_ms), ms_column(profile.estimated_ms));
  text += "\nboundary work per run (ms; count per run)\n";
  for (const BoundaryTotal& total : profile.boundaries) {
    text += fmt::format("  {:<52} {:>9}  {}\n", total.kind, ms_column(total.ms_per_run),
                        total.count_per_run == 0 ? "" : fmt::format("x{}", total.count_per_run));
  }

  std::vector<const PartitionProfile*> gaps;
  for (const PartitionProfile& row : profile.partitions) {
    if (row.gap_ms()) gaps.push_back(&row);
  }
  std::sort(gaps.begin(), gaps.end(), [](const PartitionProfile* a, const PartitionProfile* b) {
    return *a->gap_ms() > *b->gap_ms();
  });
  if (!gaps.empty()) {
    text += fmt::format("\ntop {} gaps (in context - estimate, ms)\n",
                        std::min<std::size_t>(gaps.size(), static_cast<std::size_t>(top)));
    for (std::size_t i = 0; i < gaps.size() && i < static_cast<std::size_t>(top); ++i) {
      const PartitionProfile& row = *gaps[i];
      text += fmt::format("  #{:<4} {:<9} after {:<9} {:>8} vs {:>8}  +{}  {}\n", row.index,
                          row.backend, row.previous_backend.empty() ? "-" : row.previous_backend,
                          ms_column(row.in_context_ms), ms_column(row.estimated_ms),
                          ms_column(*row.gap_ms()), shorten(row.ops, 40));
    }
  }

  text += fmt::format("\n{:>4}  {:<9} {:>9} {:>9} {:>8} {:>8}  {}\n", "#", "backend", "ctx ms",
                      "est ms", "layout", "copy", "ops");
  for (const PartitionProfile& row : profile.partitions) {
    text += fmt::format("{:>4}  {:<9} {:>9} {:>9} {:>8} {:>8}  {}\n", row.index, row.backend,
                        ms_column(row.in_context_ms), ms_column(row.estimated_ms),
                        ms_column(row.layout_ms), ms_column(row.copy_ms), shorten(row.ops, 48));
  }
  return text;
}

void annotate_plan(Plan& plan, const PlanProfile& profile) {
  for (const PartitionProfile& row : profile.partitions) {
    plan.partitions[static_cast<std::size_t>(row.index)].measured_ms = row.in_context_ms;
  }
}

PlanProfile profile_in_context(const Graph& model, const Plan& plan,
                               const BackendRegistry& registry, int threads,
                               const std::map<std::string, Tensor>& inputs, int runs, int warmup) {
  Executor executor = compile_plan(model, plan, registry, threads);
  for (int i = 0; i < warmup; ++i) executor.run(inputs);
  // Untraced and traced runs alternate, so that both sample the same
  // seconds of a machine whose speed moves.
  UntracedRuns untraced;
  TraceRecorder recorder;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    executor.run(inputs);
    untraced.run_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    untraced.kernels_ms.push_back(executor.last_kernel_seconds() * 1e3);
    executor.record_into(&recorder);
    executor.run(inputs);
    executor.record_into(nullptr);
  }
  PlanProfile profile = profile_plan(plan, recorder.spans());
  leave_out_tracing(profile, untraced);
  return profile;
}

PlanRun as_plan_run(const PlanProfile& profile) {
  PlanRun run{.run_ms = profile.run_median_ms, .beyond_partitions_ms = 0, .partitions = {}};
  for (const BoundaryTotal& total : profile.boundaries) {
    if (is_beyond_partitions(total)) run.beyond_partitions_ms += total.ms_per_run;
  }
  for (const PartitionProfile& row : profile.partitions) {
    run.partitions.push_back(PartitionRun{.backend = row.backend,
                                          .previous_backend = row.previous_backend,
                                          .estimated_ms = row.estimated_ms,
                                          .in_context_ms = row.in_context_ms});
  }
  return run;
}

}  // namespace collage
