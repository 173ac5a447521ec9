// Progress: what a long tuning run shows while it works.
//
// On a terminal, one line redrawn in place: a bar, candidates done/total,
// measured, cache hits, invalid, elapsed and ETA (once a twentieth of the
// work, and at least 3 items and 10 seconds, are done: an earlier rate says
// little). Elsewhere (CI logs, pipes)
// a plain log line every tenth of the work or every 15 seconds, so logs stay
// readable. Always on stderr: stdout carries results.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "collage/session/planning.h"

namespace collage::cli {

struct ProgressCounts {
  std::size_t done = 0;
  std::size_t total = 0;
  int measured = 0;
  int cache_hits = 0;
  int invalid = 0;
  // Shown in place of measured, cached and invalid when not empty.
  std::string detail;
  // How many will be done is not known (`total` is how many could be):
  // no bar and no ETA.
  bool open_ended = false;
};

class Progress {
 public:
  // `enabled` false prints nothing (--quiet).
  Progress(std::string label, bool enabled);
  void update(const ProgressCounts& counts);
  // Ends the line (terminal) or prints the final log line.
  void finish(const ProgressCounts& counts);

 private:
  std::string render(const ProgressCounts& counts, bool bar) const;

  std::string label_;
  bool enabled_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_log_;
  std::size_t last_logged_tenth_ = 0;
};

// What a planning run reports, drawn on stderr: the candidates, and the
// jobs of a fleet, as Progress bars, each refinement round as a line. Does nothing when not
// `enabled` (--quiet). Verification results are the command's own output.
ProgressCallback progress_printer(bool enabled);

}  // namespace collage::cli
