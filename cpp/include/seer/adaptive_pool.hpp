// How many of the engine's threads the next step uses, decided from how the
// last steps went: if rounds keep stalling (workers spend most of the step
// waiting at barriers, with waits long enough to park: someone lost its
// core), step with half the threads, down to one (at once when a step waited
// half its time: fewer threads could not have been slower); then probe now and then
// with twice the threads and go back up when a probe does not stall.
//
// Outputs never depend on the thread count, so this only moves time. The
// measurements are taken at round edges only (two clock reads per worker
// per round; none when a step runs on one thread).
#pragma once

#include <cstdint>
#include <string>

namespace seer {

// What one parallel step cost, summed over the threads that ran it.
struct StepTiming {
  unsigned threads = 1;            // threads the step ran on
  std::uint64_t wall_nanos = 0;    // the step, start to end, on the caller
  std::uint64_t wait_nanos = 0;    // summed over threads: at barriers and steal waits
  std::uint64_t parked_waits = 0;  // waits that reached the futex (longer than spin + yield)
  std::uint64_t rounds = 0;
};

// Not thread-safe: the engine calls it between parallel regions.
class AdaptivePool {
 public:
  // A step stalled when its threads waited more than this share of their
  // time and at least one wait parked (a wait of over ~0.1 ms: the spin plus
  // yield budget, so someone was late by far more than a round's work on a
  // quiet machine). One of two threads losing its core shows as ~50%; a
  // quarter of the team's time lost is where fewer threads stop costing
  // anything. Short waits do not count: on a quiet machine they are the
  // barrier's own cost, which the thread-count choice (STPA) weighs.
  static constexpr double kStallShare = 0.25;
  // Consecutive stalled steps before shedding threads: one slow step is noise.
  static constexpr unsigned kStallSteps = 3;
  // A step is *severely* stalled when its threads waited at least this share
  // of their time in at least kSevereParkedWaits parked waits: then half the
  // threads would have done the same work in no more time (t threads working
  // (1 - share) of the wall each is t/2 threads' wall at share 0.5), so the
  // pool sheds at once instead of after kStallSteps such steps, each of which
  // costs several serial steps on a busy machine. Two parked waits, not one:
  // a single late wake-up of a parked worker (a small step after a pause)
  // is not a busy machine.
  static constexpr double kSevereShare = 0.5;
  static constexpr std::uint64_t kSevereParkedWaits = 2;
  // Steps on the reduced count before the first probe; each failed probe
  // doubles the interval, up to kMaxProbeInterval, so a machine that stays
  // busy costs one slow step per ~kMaxProbeInterval.
  static constexpr unsigned kFirstProbeInterval = 8;
  static constexpr unsigned kMaxProbeInterval = 256;

  explicit AdaptivePool(unsigned max_threads);

  // Threads for the next step (1 .. max_threads).
  unsigned next_threads() const;
  // Feeds the measurements of the step that just ran on next_threads().
  void record(const StepTiming& step);
  // Turns adaptation off (every step uses max_threads) or on again.
  void set_enabled(bool enabled);
  bool enabled() const { return enabled_; }

  unsigned max_threads() const { return max_; }
  // The current reduced count (max_threads() when not reduced).
  unsigned threads() const { return current_; }
  // Why the pool runs on threads(): a sentence for env.runtime.
  const std::string& reason() const { return reason_; }
  std::uint64_t reductions() const { return reductions_; }
  std::uint64_t restores() const { return restores_; }

  // Whether `step` counts as stalled (see kStallShare), or severely so
  // (kSevereShare: shed without waiting for more such steps).
  static bool stalled(const StepTiming& step);
  static bool severely_stalled(const StepTiming& step);

 private:
  unsigned max_;
  unsigned current_;
  bool enabled_ = true;
  unsigned stalled_in_a_row_ = 0;
  unsigned steps_since_probe_ = 0;
  unsigned probe_interval_ = kFirstProbeInterval;
  std::uint64_t reductions_ = 0;
  std::uint64_t restores_ = 0;
  std::string reason_;
};

}  // namespace seer
