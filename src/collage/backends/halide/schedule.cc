#include "collage/backends/halide/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <type_traits>

#include "collage/ir/error.h"

#ifndef COLLAGE_HALIDE_PLUGIN_DIR
#define COLLAGE_HALIDE_PLUGIN_DIR "/usr/lib/x86_64-linux-gnu/halide14"
#endif

namespace collage::halide {
namespace {

using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;

// About this many elements per parallel task.
constexpr std::int64_t kTaskElements = 2048;

// The widest vector of at most `natural` lanes that fits `extent`.
int vector_width(std::int64_t extent, int natural) {
  for (int width = natural; width >= 4; width /= 2) {
    if (extent >= width) return width;
  }
  return 1;
}

// Vectorizes the innermost dimension and parallelizes the fused outer ones
// of one definition (the pure one, or an update over the same variables).
// An update may not recompute a point (ShiftInwards would accumulate twice),
// and one with a ragged tail is not vectorized (below).
template <typename Definition>
void tile(Definition definition, const std::vector<Var>& args, const Shape& shape, int natural,
          int threads, bool is_update) {
  if (args.empty()) return;
  const int width = vector_width(shape.back(), natural);
  const bool ragged = width > 1 && shape.back() % width != 0;
  // Halide 14 miscomputes some vectorized reductions whose ragged tail is
  // guarded (a variance over 5 columns after a mean over them came out
  // doubled, its last column 0): such an update stays scalar.
  bool scheduled = false;
  if (width > 1 && !(is_update && ragged)) {
    definition.vectorize(args[0], width, ragged ? TailStrategy::ShiftInwards : TailStrategy::Auto);
    scheduled = true;
  }
  std::int64_t outer = 1;
  for (std::size_t i = 0; i + 1 < shape.size(); ++i) outer *= shape[i];
  if (args.size() < 2 || threads < 2 || outer < 2) {
    if constexpr (std::is_same_v<Definition, Halide::Stage>) {
      if (!scheduled) definition.unscheduled();
    }
    return;
  }
  Var fused = args[1];
  for (std::size_t i = 2; i < args.size(); ++i) {
    Var next(fmt::format("{}_{}", fused.name(), args[i].name()));
    definition.fuse(fused, args[i], next);
    fused = next;
  }
  // A task per row costs a call through the thread pool per row: short rows
  // are grouped into tasks of about kTaskElements elements.
  const std::int64_t rows_per_task =
      std::clamp<std::int64_t>(kTaskElements / std::max<std::int64_t>(shape.back(), 1), 1, outer);
  if (rows_per_task > 1) {
    Var task(fused.name() + "_task");
    Var row(fused.name() + "_row");
    definition.split(fused, task, row, static_cast<int>(rows_per_task), TailStrategy::GuardWithIf);
    fused = task;
  }
  definition.parallel(fused);
}

void template_schedule(const Lowered& lowered, const Halide::Target& target, int threads) {
  const int natural = target.natural_vector_size<float>();
  for (const Stage& stage : lowered.stages) {
    Func f = stage.func;
    if (!stage.is_output && !stage.materialize) continue;
    if (!stage.is_output) f.compute_root();
    const std::vector<Var> args = f.args();
    tile(f, args, stage.shape, natural, threads, false);
    for (int u = 0; u < f.num_update_definitions(); ++u) {
      tile(f.update(u), args, stage.shape, natural, threads, true);
    }
  }
}

// The outputs' sizes, for the autoschedulers (the parameters carry theirs,
// set by the lowering).
void set_estimates(const Lowered& lowered) {
  for (const Stage& stage : lowered.stages) {
    if (!stage.is_output) continue;
    Halide::Region region;
    for (auto it = stage.shape.rbegin(); it != stage.shape.rend(); ++it) {
      region.emplace_back(0, static_cast<int>(*it));
    }
    Func f = stage.func;
    f.set_estimates(region);
  }
}

// Every schedule: its name here, and for an autoscheduler the name Halide
// gives it and the plugin that holds it.
struct ScheduleEntry {
  ScheduleKind kind;
  const char* name;
  const char* autoscheduler;
  const char* plugin;
};

constexpr ScheduleEntry kSchedules[] = {
    {ScheduleKind::kTemplate, "template", "", ""},
    {ScheduleKind::kMullapudi2016, "mullapudi2016", "Mullapudi2016",
     "libautoschedule_mullapudi2016.so"},
    {ScheduleKind::kAdams2019, "adams2019", "Adams2019", "libautoschedule_adams2019.so"},
    {ScheduleKind::kLi2018, "li2018", "Li2018", "libautoschedule_li2018.so"},
};

const ScheduleEntry& entry_of(ScheduleKind kind) {
  for (const ScheduleEntry& entry : kSchedules) {
    if (entry.kind == kind) return entry;
  }
  return kSchedules[0];
}

}  // namespace

std::string schedule_name(ScheduleKind kind) { return entry_of(kind).name; }

std::optional<ScheduleKind> parse_schedule(const std::string& name) {
  for (const ScheduleEntry& entry : kSchedules) {
    if (entry.name == name) return entry.kind;
  }
  return std::nullopt;
}

ScheduleKind schedule_from_environment() {
  const char* text = std::getenv("COLLAGE_HALIDE_SCHEDULE");
  if (text == nullptr || *text == '\0') return ScheduleKind::kTemplate;
  if (auto kind = parse_schedule(text)) return *kind;
  throw Error(fmt::format(
      "COLLAGE_HALIDE_SCHEDULE must be template, mullapudi2016, adams2019 or li2018, not '{}'",
      text));
}

Halide::Target kernel_target() {
  Halide::Target target = Halide::get_host_target();
  // Halide 14 reads AVX-512 BF16 as a Sapphire Rapids, whose feature set
  // includes the VEX-encoded AVX-VNNI; AMD's Zen 4 has the first and not
  // the second, and a kernel using it dies of SIGILL. Each feature level is
  // kept only when the CPU confirms what it implies.
  __builtin_cpu_init();
  if (target.has_feature(Halide::Target::AVX512_SapphireRapids) &&
      !(__builtin_cpu_supports("avxvnni") && __builtin_cpu_supports("avx512bf16"))) {
    target = target.without_feature(Halide::Target::AVX512_SapphireRapids);
  }
  if (target.has_feature(Halide::Target::AVX512_Cannonlake) &&
      !(__builtin_cpu_supports("avx512ifma") && __builtin_cpu_supports("avx512vbmi"))) {
    target = target.without_feature(Halide::Target::AVX512_Cannonlake);
  }
  return target.with_feature(Halide::Target::UserContext);
}

Result<Halide::Pipeline> schedule(const Lowered& lowered, ScheduleKind kind,
                                  const Halide::Target& target, int threads) {
  std::vector<Func> outputs = lowered.outputs;
  Halide::Pipeline pipeline(outputs);
  try {
    if (kind == ScheduleKind::kTemplate) {
      template_schedule(lowered, target, threads);
      return pipeline;
    }
    static std::mutex plugin_mutex;
    {
      std::lock_guard lock(plugin_mutex);
      Halide::load_plugin(std::string(COLLAGE_HALIDE_PLUGIN_DIR) + "/" + entry_of(kind).plugin);
    }
    set_estimates(lowered);
    // Parallelism, last-level cache bytes, the cost of a load against an op.
    const Halide::MachineParams machine(threads, 32u << 20, 40.0f);
    pipeline.auto_schedule(entry_of(kind).autoscheduler, target, machine);
    return pipeline;
  } catch (const Halide::Error& error) {
    return Failure{fmt::format("{} schedule failed: {}", schedule_name(kind), error.what())};
  }
}

}  // namespace collage::halide
