// A Measurer that answers from a script, for tests of what is done with
// measurements (kept, replaced, summed) rather than of measuring.
#pragma once

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "collage/cost/measurer.h"

namespace collage::testing {

// Answers each measurement with the next of the given seconds, and each
// screen with the next of the screens'.
class ScriptedMeasurer : public Measurer {
 public:
  explicit ScriptedMeasurer(std::deque<double> seconds, std::deque<double> screens = {})
      : seconds_(std::move(seconds)), screens_(std::move(screens)) {}
  Cost measure(const Graph&, const std::vector<NodeId>&, const Backend&) override {
    const double next = seconds_.front();
    seconds_.pop_front();
    return Cost::measured(next, next, 5);
  }
  Cost screen(const Graph&, const std::vector<NodeId>&, const Backend&) override {
    const double next = screens_.front();
    screens_.pop_front();
    return Cost::measured(next, next, 3);
  }
  std::string screen_context() const override { return "scripted"; }
  // The measurements not yet answered.
  std::size_t left() const { return seconds_.size(); }

 private:
  std::deque<double> seconds_;
  std::deque<double> screens_;
};

}  // namespace collage::testing
