#include "collage/cost/overhead_learning.h"

#include <algorithm>
#include <map>
#include <set>

#include "collage/runtime/timing.h"

namespace collage {
namespace {

// Partitions measured at or above this (ms) tell the machine's speed.
constexpr double kScaleFloorMs = 0.2;

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
std::optional<double> machine_scale(const PlanRun& run, Isolated isolated_ms) {
  std::vector<double> all;
  std::vector<double> after_own;
  for (const PartitionRun& row : run.partitions) {
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
  return std::clamp(percentile(std::move(ratios), 0.5), 0.5, 2.0);
}

}  // namespace

PartitionOverheads observed_overheads(const PlanRun& run, const PartitionOverheads& charged,
                                      PartsTimed parts) {
  const double share_ms = run.partitions.empty() ? 0.0
                                                 : run.beyond_partitions_ms /
                                                       static_cast<double>(run.partitions.size());
  auto isolated_ms = [&](const PartitionRun& row) {
    return *row.estimated_ms - charged.of(row.backend) * 1e3;
  };
  const std::optional<double> scale = machine_scale(run, isolated_ms);
  std::map<std::string, std::vector<double>> excess_ms;
  for (const PartitionRun& row : run.partitions) {
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
  std::map<std::string, int> partitions;
  for (const PartitionRun& row : run.partitions) ++partitions[row.backend];
  PartitionOverheads result;
  for (auto& [backend, values] : excess_ms) {
    // The median partition: one large partition slowed by a busy moment
    // would otherwise set the charge of every small one.
    double charge_ms = std::max(0.0, percentile(std::move(values), 0.5));
    // A backend's partitions together cannot have cost more than the whole
    // run: a charge beyond that is a disturbed profile, and taught to the
    // machine it priced the backend out of every later search.
    if (run.run_ms > 0) charge_ms = std::min(charge_ms, run.run_ms / partitions[backend]);
    result.seconds[backend] = charge_ms / 1e3;
  }
  return result;
}

PartitionOverheads overheads_fitting_the_run(const PlanRun& run,
                                             const PartitionOverheads& charged) {
  PartitionOverheads observed = observed_overheads(run, charged, PartsTimed::kWithProfile);
  double parts_ms = 0;
  double predicted_ms = 0;
  std::set<std::string> backends;
  for (const PartitionRun& row : run.partitions) {
    if (!row.estimated_ms) return observed;
    parts_ms += *row.estimated_ms - charged.of(row.backend) * 1e3;
    predicted_ms += observed.of(row.backend) * 1e3;
    backends.insert(row.backend);
  }
  const double excess_ms = std::max(0.0, run.run_ms - parts_ms);
  PartitionOverheads fitted;
  for (const std::string& backend : backends) {
    const double seconds = observed.of(backend);
    if (predicted_ms > 0) {
      fitted.seconds[backend] = seconds * excess_ms / predicted_ms;
    } else {
      fitted.seconds[backend] = excess_ms / static_cast<double>(run.partitions.size()) / 1e3;
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
    // The median: a profile taken while the machine slowed down between
    // its runs and the timing of its parts reads high, and once there are
    // three, one such profile does not set the charge.
    result.seconds[backend] = values.empty() ? 0.0 : percentile(std::move(values), 0.5);
  }
  return result;
}

}  // namespace collage
