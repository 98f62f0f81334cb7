#include "seer/adaptive_pool.hpp"

#include <algorithm>
#include <cstdio>

namespace seer {
namespace {

std::string describe(const char* what, const StepTiming& step, unsigned threads) {
  const double share =
      step.wall_nanos == 0
          ? 0.0
          : static_cast<double>(step.wait_nanos) /
                (static_cast<double>(step.wall_nanos) * static_cast<double>(step.threads));
  char text[200];
  std::snprintf(text, sizeof text, "%s: threads waited %.0f%% of a %u-thread step, %llu parked "
                "waits; next steps on %u thread%s",
                what, 100.0 * share, step.threads,
                static_cast<unsigned long long>(step.parked_waits), threads,
                threads == 1 ? "" : "s");
  return text;
}

}  // namespace

AdaptivePool::AdaptivePool(unsigned max_threads)
    : max_(std::max(1u, max_threads)), current_(max_), reason_("all threads: no stalls seen") {}

bool AdaptivePool::stalled(const StepTiming& step) {
  if (step.threads < 2 || step.parked_waits == 0 || step.wall_nanos == 0) return false;
  return static_cast<double>(step.wait_nanos) >
         kStallShare * static_cast<double>(step.wall_nanos) * static_cast<double>(step.threads);
}

bool AdaptivePool::severely_stalled(const StepTiming& step) {
  if (step.threads < 2 || step.parked_waits < kSevereParkedWaits || step.wall_nanos == 0) {
    return false;
  }
  return static_cast<double>(step.wait_nanos) >=
         kSevereShare * static_cast<double>(step.wall_nanos) * static_cast<double>(step.threads);
}

unsigned AdaptivePool::next_threads() const {
  if (!enabled_ || current_ == max_) return current_;
  // A probe: one step on twice the threads.
  if (steps_since_probe_ >= probe_interval_) return std::min(max_, current_ * 2);
  return current_;
}

void AdaptivePool::set_enabled(bool enabled) {
  enabled_ = enabled;
  if (!enabled) {
    current_ = max_;
    stalled_in_a_row_ = 0;
    reason_ = "all threads: adaptation off";
  }
}

void AdaptivePool::record(const StepTiming& step) {
  if (!enabled_ || max_ == 1) return;
  const bool stall = stalled(step);
  if (step.threads > current_) {  // the step was a probe
    steps_since_probe_ = 0;
    if (stall) {
      probe_interval_ = std::min(kMaxProbeInterval, probe_interval_ * 2);
      reason_ = describe("probe stalled", step, current_);
    } else {
      current_ = step.threads;
      ++restores_;
      probe_interval_ = kFirstProbeInterval;
      stalled_in_a_row_ = 0;
      reason_ = describe("probe ran clean", step, current_);
    }
    return;
  }
  ++steps_since_probe_;
  if (!stall) {
    stalled_in_a_row_ = 0;
    return;
  }
  const bool severe = severely_stalled(step);
  if ((++stalled_in_a_row_ < kStallSteps && !severe) || current_ == 1) return;
  current_ = std::max(1u, current_ / 2);
  ++reductions_;
  stalled_in_a_row_ = 0;
  steps_since_probe_ = 0;
  probe_interval_ = kFirstProbeInterval;
  reason_ = describe(severe ? "rounds stalled (half the step waiting)" : "rounds stalled", step,
                     current_);
}

}  // namespace seer
