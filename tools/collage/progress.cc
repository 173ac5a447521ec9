#include "progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>

namespace collage::cli {
namespace {

std::string clock_text(double seconds) {
  auto s = static_cast<long>(seconds + 0.5);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

// A report of a phase with a bar of its own, drawn in `slot` (made on the
// phase's first count, dropped when it finishes); without a total, a line.
void phase(std::unique_ptr<Progress>& slot, const char* label, const TuneProgress& p) {
  if (p.total == 0) {
    std::fprintf(stderr, "%s\n", p.message.c_str());
    return;
  }
  if (!slot) slot = std::make_unique<Progress>(label, true);
  ProgressCounts counts{p.done, p.total, 0, 0, 0, p.message};
  if (p.finished) {
    slot->finish(counts);
    slot.reset();
  } else {
    slot->update(counts);
  }
}

}  // namespace

Progress::Progress(std::string label, bool enabled)
    : label_(std::move(label)),
      enabled_(enabled),
      terminal_(::isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_log_(start_) {}

std::string Progress::render(const ProgressCounts& c, bool bar) const {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::string detail = c.detail.empty() ? fmt::format("measured {}  cached {}  invalid {}",
                                                            c.measured, c.cache_hits, c.invalid)
                                              : c.detail;
  if (c.open_ended) {
    return fmt::format("{}: {} of {} run  {}  elapsed {}", label_, c.done, c.total, detail,
                       clock_text(elapsed));
  }
  std::string eta = "?";
  if (c.done >= std::max<std::size_t>(3, c.total / 20) && elapsed >= 10 && c.total >= c.done) {
    eta = clock_text(elapsed / static_cast<double>(c.done) * static_cast<double>(c.total - c.done));
  }
  std::string text;
  if (bar) {
    constexpr int kWidth = 24;
    int filled = c.total == 0 ? kWidth : static_cast<int>(kWidth * c.done / c.total);
    text = "[" + std::string(static_cast<std::size_t>(filled), '#') +
           std::string(static_cast<std::size_t>(kWidth - filled), '.') + "] ";
  }
  return text + fmt::format("{} {}/{}  {}  elapsed {}  ETA {}", label_, c.done, c.total, detail,
                            clock_text(elapsed), eta);
}

void Progress::update(const ProgressCounts& counts) {
  if (!enabled_) return;
  if (terminal_) {
    std::fprintf(stderr, "\r%s\033[K", render(counts, true).c_str());
    std::fflush(stderr);
    return;
  }
  auto now = std::chrono::steady_clock::now();
  std::size_t tenth = counts.total == 0 ? 10 : counts.done * 10 / counts.total;
  if (tenth > last_logged_tenth_ || now - last_log_ > std::chrono::seconds(15)) {
    last_logged_tenth_ = tenth;
    last_log_ = now;
    std::fprintf(stderr, "%s\n", render(counts, false).c_str());
  }
}

void Progress::finish(const ProgressCounts& counts) {
  if (!enabled_) return;
  if (terminal_) {
    std::fprintf(stderr, "\r%s\033[K\n", render(counts, true).c_str());
  } else {
    std::fprintf(stderr, "%s\n", render(counts, false).c_str());
  }
}

ProgressCallback progress_printer(bool enabled) {
  if (!enabled) return {};
  auto bar = std::make_shared<Progress>("candidates", true);
  // One bar per batch of jobs, and per backend's compiling.
  auto jobs = std::make_shared<std::unique_ptr<Progress>>();
  auto compile = std::make_shared<std::unique_ptr<Progress>>();
  return [bar, jobs, compile](const TuneProgress& p) {
    switch (p.stage) {
      case TuneProgress::Stage::kCandidates: {
        // With screening, the message holds the counts, and how many
        // candidates will run is not known.
        ProgressCounts counts{p.done,    p.total,   p.measured,        p.cache_hits,
                              p.invalid, p.message, !p.message.empty()};
        if (p.finished) {
          bar->finish(counts);
        } else {
          bar->update(counts);
        }
        return;
      }
      case TuneProgress::Stage::kCompile:
        phase(*compile, "compiled", p);
        return;
      case TuneProgress::Stage::kJobs:
        phase(*jobs, "jobs", p);
        return;
      case TuneProgress::Stage::kRefine:
      case TuneProgress::Stage::kBody:
      case TuneProgress::Stage::kLayout:
        std::fprintf(stderr, "%s\n", p.message.c_str());
        return;
      case TuneProgress::Stage::kVerify:
        return;
    }
  };
}

}  // namespace collage::cli
