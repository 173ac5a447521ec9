// Schedules: how a lowered region's loops are ordered, split, vectorized
// and parallelized.
//
// The template schedule is this backend's own: ops that are cheap and pure
// are inlined into their consumers (one pass over memory for an
// elementwise chain), reductions and values read many times (a window op's
// input) are computed once into their own buffers, and every materialized
// stage is parallel over its outer dimensions and vectorized along the
// innermost one at the target's natural vector width. Halide's three
// autoschedulers (Mullapudi2016, Adams2019, Li2018, plugins of the halide14
// package) are the alternatives; `COLLAGE_HALIDE_SCHEDULE` picks one, and the
// choice is part of the backend's version (so of every plan and cache key).
#pragma once

#include <Halide.h>

#include <optional>
#include <string>

#include "collage/backends/halide/lowering.h"
#include "collage/ir/result.h"

namespace collage::halide {

enum class ScheduleKind { kTemplate, kMullapudi2016, kAdams2019, kLi2018 };

std::string schedule_name(ScheduleKind kind);
std::optional<ScheduleKind> parse_schedule(const std::string& name);
// COLLAGE_HALIDE_SCHEDULE (template, mullapudi2016, adams2019, li2018), or
// the template when unset. An unknown name is an Error naming the choices.
ScheduleKind schedule_from_environment();

// The target kernels are compiled for: this CPU as Halide detects it, less
// any feature level the CPU does not confirm, with a user context (the
// kernel's thread count and error text travel in it).
Halide::Target kernel_target();

// Schedules `lowered` and returns its pipeline, ready to compile.
Result<Halide::Pipeline> schedule(const Lowered& lowered, ScheduleKind kind,
                                  const Halide::Target& target, int threads);

}  // namespace collage::halide
