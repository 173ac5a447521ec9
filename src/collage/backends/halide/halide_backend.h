// The halide backend (style: fusing compiler). See halide_backend.cc.
#pragma once

#include <memory>

#include "collage/backends/backend.h"
#include "collage/backends/halide/schedule.h"

namespace collage {

// The registry's instance: schedules from COLLAGE_HALIDE_SCHEDULE.
std::unique_ptr<Backend> make_halide_backend();

// An instance with the given schedule (for comparing schedules side by side).
std::unique_ptr<Backend> make_halide_backend(halide::ScheduleKind schedule);

}  // namespace collage
