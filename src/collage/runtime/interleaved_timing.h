// Interleaved timing: several ways to run the same thing, timed side by side.
//
// Machines drift (other load, frequency, thermal state), so comparing
// strategies timed one after the other compares the drift as much as the
// strategies. Running them in rounds, A B C A B C ..., spreads any drift
// over all of them alike. Each variant is warmed up first.
//
// A plan serves its requests back to back; the first run after another
// plan finds caches, packed weights and thread pools as that plan left
// them. So in each round a variant runs untimed calls before its timed one
// (at least `settle` of them, for at least `settle_seconds`), and the
// timing is that of a plan running back to back, as the in-context profile
// and the estimates see it. Without settling, a 0.40 ms oneDNN plan of a
// small model timed 0.81 ms in rounds. One settling call is not always
// enough: the machine takes milliseconds to come back to a plan's steady
// state, so DCGAN's 1.2 ms plan timed 1.34 ms after one call and 1.15 to
// 1.19 ms after ten, as it runs back to back (docs/partitioning.md,
// "Keeping the faster plan").
#pragma once

#include <functional>
#include <vector>

#include "collage/runtime/timing.h"

namespace collage {

// Times each function `rounds` times, one timed call of each per round
// after untimed ones (at least `settle`, and more until `settle_seconds`
// have passed), after `warmup` untimed calls of each. Returns one
// TimingResult per function.
std::vector<TimingResult> time_interleaved(const std::vector<std::function<void()>>& variants,
                                           int rounds, int warmup, int settle = 1,
                                           double settle_seconds = 0);

}  // namespace collage
