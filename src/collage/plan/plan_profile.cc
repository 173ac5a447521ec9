#include "collage/plan/plan_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>

#include "collage/ir/error.h"
#include "collage/plan/plan_compiler.h"
#include "collage/plan/plan_report.h"
#include "collage/runtime/timing.h"

namespace collage {
namespace {

// Partitions measured at or above this (ms) tell the machine's speed.
constexpr double kScaleFloorMs = 0.2;

constexpr const char* kAllocationKind = "allocation (executor)";
constexpr const char* kBetweenKind = "between kernels (executor)";
constexpr const char* kVariationKind = "kernels' run-to-run variation";

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

// How much slower (above 1) or faster the machine ran the profiled plan
// than when its candidates were measured: the median of in context /
// isolated over the partitions large enough that a per-partition overhead
// is lost in them. Where three or more such partitions follow one of their
// own backend (or start the plan), only those count: they ran as their
// candidates were measured, beside their own library, while a partition
// after another backend's may be slower for a reason of the switch, which
// is an overhead to learn, not the machine's speed. None when fewer than
// three partitions are large enough.
template <typename Isolated>
std::optional<double> machine_scale(const PlanProfile& profile, Isolated isolated_ms) {
  std::vector<double> all;
  std::vector<double> after_own;
  for (const PartitionProfile& row : profile.partitions) {
    if (!row.estimated_ms) continue;
    const double isolated = isolated_ms(row);
    if (isolated < kScaleFloorMs) continue;
    all.push_back(row.in_context_ms / isolated);
    if (row.previous_backend.empty() || row.previous_backend == row.backend) {
      after_own.push_back(all.back());
    }
  }
  std::vector<double>& ratios = after_own.size() >= 3 ? after_own : all;
  if (ratios.size() < 3) return std::nullopt;
  return std::clamp(median(std::move(ratios)), 0.5, 2.0);
}

}  // namespace

PlanProfile profile_plan(const Plan& plan, const std::vector<TraceSpan>& spans, int first_run) {
  const std::size_t count = plan.partitions.size();
  int last_run = first_run - 1;
  for (const TraceSpan& span : spans) last_run = std::max(last_run, span.run);
  const int runs = last_run - first_run + 1;
  if (runs <= 0) throw Error("the trace holds no run of the plan");

  // Per run: each partition's kernel time and its inside work; each run's
  // wall time and allocations.
  auto per_run = [&](std::size_t rows) {
    return std::vector<std::vector<double>>(rows, std::vector<double>(runs, 0.0));
  };
  std::vector<std::vector<double>> kernel = per_run(count);
  std::vector<std::vector<double>> layout = per_run(count);
  std::vector<std::vector<double>> copy = per_run(count);
  std::vector<double> wall(runs, 0.0);
  std::vector<double> allocate(runs, 0.0);
  std::map<SpanKind, int> spans_of_kind;
  for (const TraceSpan& span : spans) {
    if (span.run < first_run) continue;
    const auto r = static_cast<std::size_t>(span.run - first_run);
    const double span_ms = span.duration_us / 1e3;
    if (span.partition >= static_cast<int>(count)) {
      throw Error(
          fmt::format("the trace names partition {}, but the plan has {}", span.partition, count));
    }
    if (span.run == first_run) ++spans_of_kind[span.kind];
    const auto p = static_cast<std::size_t>(std::max(span.partition, 0));
    switch (span.kind) {
      case SpanKind::kRun:
        wall[r] += span_ms;
        break;
      case SpanKind::kAllocate:
        allocate[r] += span_ms;
        break;
      case SpanKind::kPartition:
        kernel[p][r] += span_ms;
        break;
      case SpanKind::kLayout:
        layout[p][r] += span_ms;
        break;
      case SpanKind::kCopy:
        copy[p][r] += span_ms;
        break;
      case SpanKind::kDispatch:
        break;
    }
  }

  PlanProfile profile;
  profile.runs = runs;
  profile.run_median_ms = median(wall);
  profile.estimated_ms = plan.estimated_ms;
  std::vector<double> between(runs, 0.0);
  std::vector<double> layout_total(runs, 0.0);
  std::vector<double> copy_total(runs, 0.0);
  for (int r = 0; r < runs; ++r) {
    double kernels = 0;
    for (std::size_t p = 0; p < count; ++p) {
      kernels += kernel[p][static_cast<std::size_t>(r)];
      layout_total[static_cast<std::size_t>(r)] += layout[p][static_cast<std::size_t>(r)];
      copy_total[static_cast<std::size_t>(r)] += copy[p][static_cast<std::size_t>(r)];
    }
    between[static_cast<std::size_t>(r)] = std::max(
        0.0, wall[static_cast<std::size_t>(r)] - kernels - allocate[static_cast<std::size_t>(r)]);
  }
  for (std::size_t p = 0; p < count; ++p) {
    const PlanPartition& partition = plan.partitions[p];
    PartitionProfile row;
    row.index = static_cast<int>(p);
    row.backend = partition.backend;
    row.previous_backend = p == 0 ? "" : plan.partitions[p - 1].backend;
    row.ops = fmt::format("{}", fmt::join(partition.ops, "+"));
    row.estimated_ms = partition.estimated_ms;
    row.in_context_ms = trimmed_mean(kernel[p]);
    row.layout_ms = median(layout[p]);
    row.copy_ms = median(copy[p]);
    profile.partitions_ms += row.in_context_ms;
    profile.partitions.push_back(std::move(row));
  }

  profile.boundaries.push_back({"layout conversion (inside kernels)", median(layout_total),
                                spans_of_kind[SpanKind::kLayout]});
  profile.boundaries.push_back(
      {"staging copy (inside kernels)", median(copy_total), spans_of_kind[SpanKind::kCopy]});
  profile.boundaries.push_back(
      {kAllocationKind, median(allocate), spans_of_kind[SpanKind::kAllocate]});
  profile.boundaries.push_back({kBetweenKind, median(between), 0});
  // The in-context excess over the estimate, by backend pair: what a switch
  // from one backend to the next costs beyond the kernels timed alone.
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

PartitionOverheads observed_overheads(const PlanProfile& profile, const PartitionOverheads& charged,
                                      PartsTimed parts) {
  double between_ms = 0;
  for (const BoundaryTotal& total : profile.boundaries) {
    if (is_beyond_partitions(total)) between_ms += total.ms_per_run;
  }
  const double share_ms = profile.partitions.empty()
                              ? 0.0
                              : between_ms / static_cast<double>(profile.partitions.size());
  auto isolated_ms = [&](const PartitionProfile& row) {
    return *row.estimated_ms - charged.of(row.backend) * 1e3;
  };
  const std::optional<double> scale = machine_scale(profile, isolated_ms);
  std::map<std::string, std::vector<double>> excess_ms;
  for (const PartitionProfile& row : profile.partitions) {
    if (!row.estimated_ms) continue;
    // Without the machine's speed, a large partition's excess is as much
    // the speed as an overhead: DCGAN's plan, two XNNPACK partitions of 1
    // to 1.5 ms profiled in a slow spell, taught a charge of 1.3 ms per
    // XNNPACK partition. Only small partitions tell the overhead then,
    // unless the parts were timed beside the runs.
    if (!scale && parts == PartsTimed::kWhenSearched && isolated_ms(row) >= kScaleFloorMs) {
      continue;
    }
    excess_ms[row.backend].push_back(row.in_context_ms - scale.value_or(1.0) * isolated_ms(row) +
                                     share_ms);
  }
  PartitionOverheads result;
  for (auto& [backend, values] : excess_ms) {
    // The median partition: one large partition slowed by a busy moment
    // would otherwise set the charge of every small one.
    result.seconds[backend] = std::max(0.0, median(std::move(values))) / 1e3;
  }
  return result;
}

PartitionOverheads overheads_fitting_the_run(const PlanProfile& profile,
                                             const PartitionOverheads& charged) {
  PartitionOverheads observed = observed_overheads(profile, charged, PartsTimed::kWithProfile);
  double parts_ms = 0;
  double predicted_ms = 0;
  std::set<std::string> backends;
  for (const PartitionProfile& row : profile.partitions) {
    if (!row.estimated_ms) return observed;
    parts_ms += *row.estimated_ms - charged.of(row.backend) * 1e3;
    predicted_ms += observed.of(row.backend) * 1e3;
    backends.insert(row.backend);
  }
  const double excess_ms = std::max(0.0, profile.run_median_ms - parts_ms);
  PartitionOverheads fitted;
  for (const std::string& backend : backends) {
    const double seconds = observed.of(backend);
    if (predicted_ms > 0) {
      fitted.seconds[backend] = seconds * excess_ms / predicted_ms;
    } else {
      fitted.seconds[backend] = excess_ms / static_cast<double>(profile.partitions.size()) / 1e3;
    }
  }
  return fitted;
}

PartitionOverheads overheads_over_rounds(const std::vector<PartitionOverheads>& rounds,
                                         const std::vector<std::string>& backends) {
  PartitionOverheads result;
  for (const std::string& backend : backends) {
    std::vector<double> values;
    for (const PartitionOverheads& round : rounds) {
      auto found = round.seconds.find(backend);
      if (found != round.seconds.end()) values.push_back(found->second);
    }
    if (values.empty()) {
      result.seconds[backend] = 0.0;
      continue;
    }
    // The median: a profile taken while the machine slowed down between
    // its runs and the timing of its parts reads high, and once there are
    // three, one such profile does not set the charge.
    result.seconds[backend] = median(std::move(values));
  }
  return result;
}

}  // namespace collage
