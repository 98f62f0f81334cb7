// How many of the engine's threads the next step uses, decided from how the
// last steps went: if rounds keep stalling (workers spend most of the step
// waiting at barriers, with waits long enough to park: someone lost its
// core), step with half the threads, down to one (at once when a step waited
// half its time: fewer threads could not have been slower); then probe now and then
// with twice the threads and go back up when a probe does not stall, or
// when it handled its events faster than the reduced count did (a stall
// that still pays, e.g. 2 threads on a busy machine where the step has few
// rounds). A stalled step does not shed while fewer threads were measured
// recently and were slower; and the first steps after a shed, the first
// measurements of fewer threads, undo the shed at once if the stalled
// steps that caused it were faster per event (a host that takes a vCPU now
// and then stalls the rounds, but two threads still pay).
//
// Probes are cheap on a busy machine: once a probe failed, later ones are
// skipped (and the interval doubles as for a failed one) while the
// one-thread steps themselves lose their core (their run fraction, the
// share of their wall time the caller was not kept waiting for a CPU, is
// low: the load that failed the probe persists), unless
// more threads were faster per event when last measured. The first probe
// after a shed always runs: a stall that sheds can be one bad step where
// more threads pay under the load (Aircraft 1024). When they run unpreempted again
// (the load went away), the next probe comes after kFirstProbeInterval
// steps whatever the interval had grown to.
//
// Outputs never depend on the thread count, so this only moves time. The
// measurements are taken at round edges only (two clock reads per worker
// per round; none when a step runs on one thread, except the caller's run
// delay around steps of at least kRunDelayMinNanos).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace seer {

// What one parallel step cost, summed over the threads that ran it.
struct StepTiming {
  unsigned threads = 1;            // threads the step ran on
  std::uint64_t wall_nanos = 0;    // the step, start to end, on the caller
  std::uint64_t wait_nanos = 0;    // summed over threads: at barriers and steal waits
  std::uint64_t parked_waits = 0;  // waits that reached the futex (longer than spin + yield)
  std::uint64_t rounds = 0;
  std::uint64_t events = 0;     // handled in the step (0: unknown; then costs are per step)
  // One-thread steps: the wall time the caller ran or could have run, i.e.
  // not waiting for a CPU (wall minus its run delay; 0: not measured).
  std::uint64_t run_nanos = 0;
  // Part of wall_nanos: the previous step's boundary (observations etc., on
  // the pool or inline), which follows the rounds; not covered by run_nanos.
  std::uint64_t boundary_nanos = 0;
};

// Times a step that runs on the calling thread alone: wall time always, and
// when `with_run_delay` how long the thread waited for a CPU meanwhile
// (platform::thread_run_delay: a file read each end, so only around steps
// long enough for it not to matter: AdaptivePool::wants_run_delay()). Not
// the thread's CPU clock (platform.hpp says why: beside busy processes,
// one-thread steps of a 2-thread PHOLD 16384 pool that read it were
// preempted inside the step twice as often as a pool of one's).
class StepClock {
 public:
  explicit StepClock(bool with_run_delay);
  // Sets wall_nanos and (when measured) run_nanos of `timing`.
  void stop(StepTiming& timing) const;

 private:
  bool with_run_delay_;
  std::uint64_t wall_start_ = 0;
  std::uint64_t delay_start_ = 0;
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
  // pool sheds after kSevereSteps stalled steps ending in a severe one
  // instead of after kStallSteps, each of which costs several serial steps
  // on a busy machine. Two parked waits, not one: a single late wake-up of a
  // parked worker (a small step after a pause) is not a busy machine. Two
  // steps, not one: on a quiet machine a single step can stall badly too (a
  // 2-vCPU VM whose host took a CPU away: ~1 step in 50 of PCS 64x64 waited
  // 74% of its time), and each such shed cost 8 steps on one thread.
  static constexpr double kSevereShare = 0.5;
  static constexpr std::uint64_t kSevereParkedWaits = 2;
  static constexpr unsigned kSevereSteps = 2;
  // Steps on the reduced count before the first probe; each failed probe
  // doubles the interval, up to kMaxProbeInterval, so a machine that stays
  // busy costs one slow step per ~kMaxProbeInterval.
  static constexpr unsigned kFirstProbeInterval = 8;
  static constexpr unsigned kMaxProbeInterval = 256;
  // A probe that handled its events in at most this share of the reduced
  // count's recent time per event restores its count even if it stalled;
  // a stalled step at least this much faster than the half count's recent
  // time per event does not count as stalled. 10%: beyond step-to-step noise.
  static constexpr double kFasterShare = 0.9;
  // A count's time per event is "recent" for this many steps (after that,
  // the load it was measured under may have changed).
  static constexpr unsigned kFreshSteps = 64;
  // One-thread steps that ran less than this share of their wall time (not
  // waiting for a CPU; an average over the last few such steps) lost their core to
  // other work: a probe then would stall too, so it is skipped. 0.85 as
  // STPA's RUN_FRACTION_MIN (seer_env/stpa/load.py).
  static constexpr double kBusyRunFraction = 0.85;
  // The caller's run delay is read only around steps at least this long
  // (two file reads, ~1.5 us each, stay near 1% of the step).
  static constexpr std::uint64_t kRunDelayMinNanos = 250000;
  // The steps on the reduced count whose fastest is compared with the
  // stalled steps that shed: two (one step of a busy machine can lose its
  // core and make the stalls look cheap: PCS 64x64 beside one busy process
  // per core, a shed undone on one such step ran 2-thread steps 1.3x the
  // one-thread ones), after the first, which runs on cold caches (its cost
  // is not recorded, see note_step()).
  static constexpr unsigned kShedCheckSamples = 2;

  explicit AdaptivePool(unsigned max_threads);

  // Threads for the next step (1 .. max_threads).
  unsigned next_threads() const;
  // Whether the next step, if it runs on one thread, should measure the
  // caller's run delay (StepClock): the last one-thread step was long enough.
  bool wants_run_delay() const {
    return enabled_ && current_ < max_ && last_wall_ >= kRunDelayMinNanos;
  }
  // Feeds the measurements of the step that just ran on next_threads().
  void record(const StepTiming& step);
  // Starts as after a confirmed shed: one thread (the serial loop) from the
  // next step, probes of two threads from kFirstProbeInterval steps on,
  // skipped while one-thread steps lose their core. For a pool size chosen
  // while the CPUs were busy (STPA's preflight under contention): its first
  // steps would otherwise stall and run in rounds on one thread (~1.3x a
  // serial loop step's CPU) until a probe confirmed the load. `why` starts
  // reason(). No effect with adaptation off or a pool of one.
  void start_reduced(const std::string& why);
  // Turns adaptation off (every step uses max_threads) or on again.
  void set_enabled(bool enabled);
  bool enabled() const { return enabled_; }

  unsigned max_threads() const { return max_; }
  // The current reduced count (max_threads() when not reduced).
  unsigned threads() const { return current_; }
  // Why the pool runs on threads(): a sentence for env.runtime.
  const std::string& reason() const { return reason_; }
  // Whether the pool runs reduced and a probe has failed since it shed: the
  // load behind the shed outlasted a probe interval. Until then a shed is
  // tentative (one bad stretch on a quiet machine, undone by the first probe).
  bool reduction_confirmed() const { return current_ < max_ && probe_failed_; }
  std::uint64_t reductions() const { return reductions_; }
  std::uint64_t restores() const { return restores_; }
  // Probes skipped because the one-thread steps were preempted.
  std::uint64_t skipped_probes() const { return skipped_probes_; }

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
  std::uint64_t skipped_probes_ = 0;
  std::string reason_;
  // Time per event (per step when events are unknown) by thread count: an
  // exponential average, and the step count at its last update (0: none).
  struct Cost {
    double nanos = 0.0;
    double last = 0.0;  // the newest step's alone
    std::uint64_t at = 0;
  };
  std::vector<Cost> cost_;
  std::uint64_t steps_ = 0;  // steps recorded
  // Run fraction (run_nanos / wall time) of the one-thread steps that
  // measured their run delay since the last shed: an exponential average, and how many
  // steps it holds.
  double run_fraction_ = 0.0;
  unsigned run_samples_ = 0;
  // The stalled steps counted in stalled_in_a_row_: their summed time per
  // event (meaningful only while stalled_in_a_row_ > 0); after a shed, their
  // mean, the reduced-count steps left until it is compared (the first,
  // cold step, then kShedCheckSamples; 0: no check pending), and the
  // fastest of those steps so far (+inf before the first).
  double stall_cost_sum_ = 0.0;
  double shed_cost_ = 0.0;
  unsigned shed_check_in_ = 0;
  double shed_check_best_ = 0.0;
  bool skipped_since_probe_ = false;  // a probe was skipped since the last real one
  bool probe_failed_ = false;         // a probe failed since the last shed or restore
  std::uint64_t last_wall_ = 0;       // wall time of the last step
  unsigned last_threads_ = 0;         // threads of the last step (0: none yet)

  enum class Probe { kNone, kRun, kSkip };
  // What the next step does about probing (next_threads() and record() agree).
  Probe probe_state() const;

  void note_cost(const StepTiming& step);
  // The recent time per event on `threads`, or 0 if none is recent.
  double recent_cost(unsigned threads) const;
  // Whether twice the current threads, in their last step (however long
  // ago), handled events faster than the current count does now.
  bool more_threads_paid() const;
  // The run fraction of the recent one-thread steps (-1: too few measured).
  double run_fraction() const;

  // The transitions of record(), one per step's outcome:
  // A probe (a step on more threads than current_) ended: adopt its count,
  // or fail it (the probe interval doubles).
  void end_probe(const StepTiming& step, bool stall);
  void fail_probe(const StepTiming& step);
  void adopt_probe(const StepTiming& step, bool stall);
  // A step on the reduced count: its cost (not the first one-thread step
  // after more threads, which finds the entities in other cores' caches)
  // and its run fraction.
  void note_step(const StepTiming& step);
  void note_run_fraction(const StepTiming& step);
  // The probe due at this step was skipped (the CPUs are busy).
  void skip_probe();
  // One of the steps that check a recent shed; true when it undid the shed
  // (undo_shed: the stalled steps were faster per event than fewer threads).
  bool check_shed(const StepTiming& step);
  void undo_shed(const StepTiming& step);
  // A stalled step that was still faster per event than half the threads,
  // recently measured: it does not count as stalled.
  bool stall_pays(const StepTiming& step) const;
  // A stall that counts: extends the streak, and sheds half the threads when
  // the streak is long enough (kStallSteps, or kSevereSteps ending severe).
  void note_stall(const StepTiming& step);
  void shed(const StepTiming& step, bool severe);
};

}  // namespace seer
