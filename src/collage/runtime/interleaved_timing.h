// Interleaved timing: several ways to run the same thing, timed side by side.
//
// Machines drift (other load, frequency, thermal state), so comparing
// strategies timed one after the other compares the drift as much as the
// strategies. Running them in rounds, A B C A B C ..., spreads any drift
// over all of them alike. Each variant is warmed up first.
//
// A plan serves its requests back to back; the first run after another
// plan finds caches, packed weights and thread pools as that plan left
// them. So in each round a variant runs `settle` untimed calls before its
// timed one, and the timing is that of a plan running back to back, as
// the in-context profile and the estimates see it. Without settling, a
// 0.40 ms oneDNN plan of a small model timed 0.81 ms in rounds.
#pragma once

#include <functional>
#include <vector>

#include "collage/runtime/timing.h"

namespace collage {

// Times each function `rounds` times, one timed call of each per round
// after `settle` untimed ones, after `warmup` untimed calls of each.
// Returns one TimingResult per function.
std::vector<TimingResult> time_interleaved(const std::vector<std::function<void()>>& variants,
                                           int rounds, int warmup, int settle = 1);

}  // namespace collage
