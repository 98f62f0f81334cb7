#include "adaptive_pool.hpp"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <limits>

#include "platform.hpp"

namespace seer {
namespace {

std::uint64_t clock_nanos(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

double waited_share(const StepTiming& step) {
  return step.wall_nanos == 0
             ? 0.0
             : static_cast<double>(step.wait_nanos) /
                   (static_cast<double>(step.wall_nanos) * static_cast<double>(step.threads));
}

// Time per event (per step when the events are unknown).
double cost_of(const StepTiming& step) {
  return static_cast<double>(step.wall_nanos) /
         static_cast<double>(std::max<std::uint64_t>(1, step.events));
}

std::string describe(const char* what, const StepTiming& step, unsigned threads) {
  char text[240];
  std::snprintf(text, sizeof text, "%s: threads waited %.0f%% of a %u-thread step, %llu parked "
                "waits; next steps on %u thread%s",
                what, 100.0 * waited_share(step), step.threads,
                static_cast<unsigned long long>(step.parked_waits), threads,
                threads == 1 ? "" : "s");
  return text;
}

// Exponential average weight of the newest step's cost.
constexpr double kCostWeight = 0.3;
// One-thread steps whose run delay was measured before their run fraction
// counts, and the newest one's weight in its average (about the last 4-8
// steps: a load that ended shows within 3 unpreempted steps).
constexpr unsigned kRunSamples = 3;
constexpr double kRunWeight = 0.25;

}  // namespace

StepClock::StepClock(bool with_run_delay) : with_run_delay_(with_run_delay) {
  if (with_run_delay_) with_run_delay_ = platform::thread_run_delay(delay_start_);
  wall_start_ = clock_nanos(CLOCK_MONOTONIC);
}

void StepClock::stop(StepTiming& timing) const {
  timing.wall_nanos = clock_nanos(CLOCK_MONOTONIC) - wall_start_;
  std::uint64_t delay = 0;
  if (with_run_delay_ && platform::thread_run_delay(delay)) {
    const std::uint64_t waited = delay - delay_start_;
    // At least 1: 0 means "not measured".
    timing.run_nanos = timing.wall_nanos > waited ? timing.wall_nanos - waited : 1;
  }
}

AdaptivePool::AdaptivePool(unsigned max_threads)
    : max_(std::max(1u, max_threads)),
      current_(max_),
      reason_("all threads: no stalls seen"),
      cost_(max_ + 1) {}

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

double AdaptivePool::run_fraction() const {
  return run_samples_ < kRunSamples ? -1.0 : run_fraction_;
}

AdaptivePool::Probe AdaptivePool::probe_state() const {
  if (!enabled_ || current_ == max_) return Probe::kNone;
  const double run = run_fraction();
  const bool busy = run >= 0.0 && run < kBusyRunFraction;
  const bool quiet = run >= kBusyRunFraction;
  // Skipped probes grew the interval while the steps lost their core; now
  // they run unpreempted: the load went away, probe soon.
  if (skipped_since_probe_ && quiet && steps_since_probe_ >= kFirstProbeInterval) {
    return Probe::kRun;
  }
  if (steps_since_probe_ < probe_interval_) return Probe::kNone;
  // Due. A probe now would wait for a core too: skip it, unless more threads
  // were faster per event when last measured (their stalls paid), or the
  // interval reached its cap (so a load under which they pay is still found).
  if (busy && probe_failed_ && probe_interval_ < kMaxProbeInterval && !more_threads_paid()) {
    return Probe::kSkip;
  }
  return Probe::kRun;
}

unsigned AdaptivePool::next_threads() const {
  if (probe_state() == Probe::kRun) return std::min(max_, current_ * 2);
  return current_;
}

void AdaptivePool::set_enabled(bool enabled) {
  enabled_ = enabled;
  if (!enabled) {
    current_ = max_;
    stalled_in_a_row_ = 0;
    shed_check_in_ = 0;
    reason_ = "all threads: adaptation off";
  }
}

void AdaptivePool::start_reduced(const std::string& why) {
  if (!enabled_ || max_ == 1) return;
  current_ = 1;
  probe_failed_ = true;  // a confirmed shed: the serial loop, probes may be skipped
  probe_interval_ = kFirstProbeInterval;
  steps_since_probe_ = 0;
  skipped_since_probe_ = false;
  stalled_in_a_row_ = 0;
  shed_check_in_ = 0;
  ++reductions_;
  reason_ = why + "; next steps on 1 thread until a probe of more runs clean";
}

void AdaptivePool::note_cost(const StepTiming& step) {
  if (step.threads == 0 || step.threads > max_ || step.wall_nanos == 0) return;
  Cost& c = cost_[step.threads];
  const double cost = cost_of(step);
  if (c.at == 0 || steps_ - c.at > kFreshSteps) {
    c.nanos = cost;
  } else {
    c.nanos += kCostWeight * (cost - c.nanos);
  }
  c.last = cost;
  c.at = steps_;
}

bool AdaptivePool::more_threads_paid() const {
  const unsigned more = std::min(max_, current_ * 2);
  const Cost& mine = cost_[current_];
  const Cost& theirs = cost_[more];
  return more > current_ && mine.at != 0 && theirs.at != 0 &&
         theirs.last <= kFasterShare * mine.nanos;
}

double AdaptivePool::recent_cost(unsigned threads) const {
  if (threads == 0 || threads > max_) return 0.0;
  const Cost& c = cost_[threads];
  return c.at != 0 && steps_ - c.at <= kFreshSteps ? c.nanos : 0.0;
}

// One step's measurements, as a sequence of transitions: a probe ends
// (adopted or failed); otherwise the step's cost and run fraction are noted,
// a probe due now may be skipped, the check of a recent shed may undo it, and
// a stall that does not pay extends the streak that sheds threads.
void AdaptivePool::record(const StepTiming& step) {
  if (!enabled_ || max_ == 1) return;
  const Probe planned = probe_state();  // what next_threads() said before this step
  ++steps_;
  last_wall_ = step.wall_nanos;
  const bool stall = stalled(step);
  if (step.threads > current_) {  // the step was a probe
    end_probe(step, stall);
    return;
  }
  note_step(step);
  if (planned == Probe::kSkip) skip_probe();
  // (Without events, a cost is per step: no shed check.)
  if (shed_check_in_ != 0 && step.events != 0 && check_shed(step)) return;
  if (!stall || stall_pays(step)) {
    stalled_in_a_row_ = 0;
    return;
  }
  note_stall(step);
}

void AdaptivePool::end_probe(const StepTiming& step, bool stall) {
  // Compare with the reduced count before this step's cost joins the averages.
  const double reduced = recent_cost(current_);
  const bool faster = reduced > 0.0 && cost_of(step) <= kFasterShare * reduced;
  note_cost(step);
  last_threads_ = step.threads;
  steps_since_probe_ = 0;
  skipped_since_probe_ = false;
  if (stall && !faster) {
    fail_probe(step);
  } else {
    adopt_probe(step, stall);
  }
}

void AdaptivePool::fail_probe(const StepTiming& step) {
  probe_failed_ = true;
  probe_interval_ = std::min(kMaxProbeInterval, probe_interval_ * 2);
  reason_ = describe("probe stalled", step, current_);
}

void AdaptivePool::adopt_probe(const StepTiming& step, bool stall) {
  current_ = step.threads;
  probe_failed_ = false;
  ++restores_;
  probe_interval_ = kFirstProbeInterval;
  stalled_in_a_row_ = 0;
  shed_check_in_ = 0;
  reason_ = describe(stall ? "probe stalled but beat fewer threads per event" : "probe ran clean",
                     step, current_);
}

void AdaptivePool::note_step(const StepTiming& step) {
  // A one-thread step after a step on more threads finds the other workers'
  // entities (states, queues, event nodes) in their cores' caches, not its
  // own: not what one thread costs once it has run a step.
  if (step.threads > 1 || last_threads_ == 1) note_cost(step);
  last_threads_ = step.threads;
  ++steps_since_probe_;
  if (step.threads == 1 && step.run_nanos != 0 && step.wall_nanos > step.boundary_nanos) {
    note_run_fraction(step);
  }
}

void AdaptivePool::note_run_fraction(const StepTiming& step) {
  const double run = std::min(1.0, static_cast<double>(step.run_nanos) /
                                       static_cast<double>(step.wall_nanos - step.boundary_nanos));
  run_fraction_ = run_samples_ == 0 ? run : run_fraction_ + kRunWeight * (run - run_fraction_);
  run_samples_ = std::min(run_samples_ + 1, kRunSamples);
}

void AdaptivePool::skip_probe() {
  const double run = run_fraction();
  ++skipped_probes_;
  probe_interval_ = std::min(kMaxProbeInterval, probe_interval_ * 2);
  steps_since_probe_ = 0;
  skipped_since_probe_ = true;
  char text[200];
  std::snprintf(text, sizeof text,
                "probe skipped: %u-thread steps ran %.0f%% of their time on a CPU (the CPUs are "
                "busy); next steps on %u thread%s",
                current_, 100.0 * run, current_, current_ == 1 ? "" : "s");
  reason_ = text;
}

bool AdaptivePool::check_shed(const StepTiming& step) {
  // The first steps since a shed. Did it pay? If the stalled steps handled
  // their events faster than the fastest of these steps on fewer threads,
  // they were worth their waits (on a VM whose host took a vCPU now and then,
  // PHOLD 16384 ran 13.5 ms a step shed, 6.6 ms unshed): go back now, not at
  // the first probe. These steps' cost is now recent, so the same stalls do
  // not shed again while it stays fresh (stall_pays()).
  --shed_check_in_;
  if (shed_check_in_ < kShedCheckSamples) {  // not the first, cold step (note_step)
    shed_check_best_ = std::min(shed_check_best_, cost_of(step));
  }
  if (shed_check_in_ == 0 && shed_cost_ <= kFasterShare * shed_check_best_) {
    undo_shed(step);
    return true;
  }
  return false;
}

void AdaptivePool::undo_shed(const StepTiming& step) {
  current_ = std::min(max_, current_ * 2);
  ++restores_;
  steps_since_probe_ = 0;
  probe_interval_ = kFirstProbeInterval;
  stalled_in_a_row_ = 0;
  char text[200];
  std::snprintf(text, sizeof text,
                "shed undone: the stalled steps took %.0f%% of a %u-thread step's time per "
                "event; next steps on %u threads",
                100.0 * shed_cost_ / shed_check_best_, step.threads, current_);
  reason_ = text;
}

bool AdaptivePool::stall_pays(const StepTiming& step) const {
  const unsigned fewer = std::max(1u, current_ / 2);
  const double fewer_cost = recent_cost(fewer);
  return fewer < current_ && fewer_cost > 0.0 && cost_of(step) <= kFasterShare * fewer_cost;
}

void AdaptivePool::note_stall(const StepTiming& step) {
  const bool severe = severely_stalled(step);
  // A new streak starts its sum afresh.
  stall_cost_sum_ = (stalled_in_a_row_ == 0 ? 0.0 : stall_cost_sum_) + cost_of(step);
  ++stalled_in_a_row_;
  const bool due =
      stalled_in_a_row_ >= kStallSteps || (severe && stalled_in_a_row_ >= kSevereSteps);
  if (due && current_ != 1) shed(step, severe);
}

void AdaptivePool::shed(const StepTiming& step, bool severe) {
  current_ = std::max(1u, current_ / 2);
  ++reductions_;
  shed_cost_ = stall_cost_sum_ / stalled_in_a_row_;
  shed_check_in_ = 1 + kShedCheckSamples;
  shed_check_best_ = std::numeric_limits<double>::infinity();
  stalled_in_a_row_ = 0;
  steps_since_probe_ = 0;
  probe_interval_ = kFirstProbeInterval;
  run_samples_ = 0;
  skipped_since_probe_ = false;
  probe_failed_ = false;
  reason_ = describe(severe ? "rounds stalled (half the step waiting)" : "rounds stalled", step,
                     current_);
}

}  // namespace seer
