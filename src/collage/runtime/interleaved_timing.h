// Interleaved timing: several ways to run the same thing, timed side by side.
//
// Machines drift (other load, frequency, thermal state), so comparing
// strategies timed one after the other compares the drift as much as the
// strategies. Running them in rounds, A B C A B C ..., spreads any drift
// over all of them alike. Each variant is warmed up first.
#pragma once

#include <functional>
#include <vector>

#include "collage/runtime/timing.h"

namespace collage {

// Times each function `rounds` times, one call of each per round, after
// `warmup` untimed calls of each. Returns one TimingResult per function.
std::vector<TimingResult> time_interleaved(const std::vector<std::function<void()>>& variants,
                                           int rounds, int warmup);

}  // namespace collage
