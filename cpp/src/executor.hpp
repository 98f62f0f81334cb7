// The executor interface: how the pending events of one env are stored and
// in which order (and on how many threads) handlers run.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dispatcher.hpp"
#include "seer/event.hpp"
#include "seer/model.hpp"

namespace seer {

// One step window [t_begin, t_end) and the actions applied at t_begin.
struct StepWindow {
  double t_begin = 0.0;
  double t_end = 0.0;
  const ActionView* actions = nullptr;  // one per agent
  const std::uint8_t* alive = nullptr;  // one per agent; 0: no on_action
  std::uint32_t num_agents = 0;
  std::uint64_t event_budget = 0;       // max events in this step; 0: unlimited
  // The memory guard: most events pending at once during this step
  // (pending_event_limit(); the parallel executor counts its node blocks).
  std::uint64_t pending_limit = UINT64_MAX;
  // Decision windows (Simulation::advance) cut a step into windows of at
  // most one lookahead: `step_end` is the end of the step a window belongs
  // to (0: t_end), and `continues_step` says that the previous run_step was
  // that step's previous window and that only insert() changed the pending
  // events since (the answers), so an executor may keep what it knew of
  // them (the parallel executor's wake calendars) instead of reading every
  // entity's queue again.
  double step_end = 0.0;
  bool continues_step = false;
  // Where an executor's knowledge of the pending events may reach.
  double known_until() const { return step_end > t_end ? step_end : t_end; }
};

// What one step cost. Filled by run_step.
struct StepStats {
  std::uint64_t events = 0;         // events handled
  std::uint64_t cross_events = 0;   // of those, scheduled by another entity
  std::uint64_t rounds = 0;         // synchronization rounds (horizons)
  unsigned threads = 0;             // threads the step ran on (0: no step yet;
                                    // the parallel executor may shed some)
  std::uint64_t parked_waits = 0;   // waits that parked a thread (a stall)
  // Work counters of the parallel executor's rounds (0 where a step ran the
  // serial loop). They count work, not time, so they do not depend on the
  // machine: the same config and seed give the same figures on any number
  // of threads of one pool size.
  std::uint64_t ready = 0;        // entities found ready, summed over rounds
  // Entity queue lines read: every entity's at the step's begin, then those
  // of the entities the rounds list as ready (entities + ready, normally).
  std::uint64_t queue_reads = 0;
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual std::string name() const = 0;
  virtual unsigned num_threads() const = 0;

  // Called once, before anything else, with the env's dispatcher.
  virtual void bind(Dispatcher& dispatcher) = 0;
  // Drops every pending event.
  virtual void clear() = 0;
  // After clear(): frees what clear() keeps for the next events (queues'
  // buffers, node pools), when the events are moving elsewhere for a while
  // (a checked step's serial stand-in). Optional: the default keeps them.
  virtual void release_storage() {}
  // Runs on_init for every entity (reset). Events go to the pending set.
  virtual void initialize() = 0;
  // Adds a pending event (restoring a saved env). Not during a step.
  virtual void insert(const Event& event) = 0;
  // insert() of every event of events[0, n) (a load): an executor may
  // order the work to suit its layout.
  virtual void insert_all(const Event* events, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) insert(events[i]);
  }
  // insert() of every event of each list of lists[0, count), in order,
  // between two windows of a step (a window's answers: one list per answered
  // agent): unlike insert_all, what the executor knows of the other pending
  // events stays valid; an executor may spread the work over its threads.
  virtual void insert_lists(const std::vector<Event>* lists, std::size_t count) {
    for (std::size_t k = 0; k < count; ++k) {
      for (const Event& event : lists[k]) insert(event);
    }
  }
  // Appends every pending event, in no particular order.
  virtual void collect_pending(std::vector<Event>& out) const = 0;
  // Appends a pointer to every pending event where the executor holds it
  // (valid until the pending set next changes) and returns true; false
  // where it cannot (the caller then copies them with collect_pending).
  // Saves read the events in place, with no copy of them.
  virtual bool pending_in_place(std::vector<const Event*>& out) const {
    (void)out;
    return false;
  }
  virtual std::size_t pending_count() const = 0;
  // Applies actions, then handles every pending event with time < t_end,
  // in an order whose outputs equal the serial key order's.
  virtual void run_step(const StepWindow& window, StepStats& stats) = 0;
  // Contract checks (a checked step) need one handler at a time. These run
  // the step, or on_init of every entity, so on the calling thread, over the
  // pending events where the executor holds them, without changing how later
  // steps run, and return true; false where the executor cannot (the
  // Simulation then runs it on a serial stand-in and moves the pending events
  // there and back). The default: what run_step() and initialize() do when
  // the executor has one thread.
  virtual bool run_step_one_at_a_time(const StepWindow& window, StepStats& stats) {
    if (num_threads() != 1) return false;
    run_step(window, stats);
    return true;
  }
  virtual bool initialize_one_at_a_time() {
    if (num_threads() != 1) return false;
    initialize();
    return true;
  }
  // Calls fn(i) for i in [0, n), possibly in parallel; for boundary work.
  virtual void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) = 0;
  // A step is coming soon: wake parked worker threads now (a hint; executors
  // without threads ignore it).
  virtual void prewake() {}
  // Why the last step ran on StepStats::threads threads, when the executor
  // decides that at run time (empty otherwise).
  virtual std::string thread_decision() const { return {}; }
  // The next steps run on one thread (the serial loop) until a probe of more
  // threads runs clean, as after a confirmed shed: the pool size was chosen
  // on a machine whose CPUs were busy (`why` says so in thread_decision()).
  // Executors that do not adapt their thread count ignore it. Between steps.
  virtual void start_on_one_thread(const std::string& why) { (void)why; }
  // Joins the worker threads (close()); the next run starts fresh ones.
  // Not while a step runs (same rules as run_step).
  virtual void release_threads() {}
};

// The conservative horizon: every event with time < the result is safe
// when LB is the earliest pending time. LB + L, but at least the next double
// after LB (cross-entity events are strictly later than their sender's now,
// which matters when L is below half an ulp of LB), and at most t_end.
inline double safe_horizon(double lb, double lookahead, double t_end) {
  return std::min(std::max(lb + lookahead, std::nextafter(lb, INFINITY)), t_end);
}

// Throws EventBudgetExceeded for `window` (shared by executors).
[[noreturn]] void throw_event_budget(const StepWindow& window);
// Throws EventBudgetExceeded: `pending` events are pending, more than
// window.pending_limit (the memory guard; shared by executors).
[[noreturn]] void throw_pending_limit(const StepWindow& window, std::uint64_t pending);

// Steps the instances of a vector env together, one executor per instance.
// Built by make_batch_runner() for an executor name: with "parallel" every
// instance shares one engine and a batch step is one parallel region; the
// other executors step the instances one after another.
class BatchRunner {
 public:
  virtual ~BatchRunner() = default;
  // An executor for one more instance (member number = how many were added
  // before). The runner keeps a pointer to it: it must stay the instance's
  // executor, alive, while the runner is used. Not thread-safe; allocates.
  virtual std::unique_ptr<Executor> add_instance() = 0;
  // One step of each listed instance: member members[k] runs windows[k],
  // fills stats[k] (zeroed first) and failures[k] (null when it went well).
  // A failing instance stops; the others complete their step. Blocks until
  // all are done; one caller at a time.
  virtual void run_steps(const std::size_t* members, const StepWindow* windows, StepStats* stats,
                         std::exception_ptr* failures, std::size_t count) = 0;
  // A batch step is coming soon: wake parked worker threads (a hint).
  virtual void prewake() = 0;
  // As Executor::start_on_one_thread, for the batch's steps.
  virtual void start_on_one_thread(const std::string& why) { (void)why; }
  // Joins the worker threads; the next run starts fresh ones (Executor's).
  virtual void release_threads() = 0;
};

// Builds an executor for `num_threads` threads (already checked by
// check_num_threads); may throw std::invalid_argument for a count it refuses.
using ExecutorFactory = std::function<std::unique_ptr<Executor>(unsigned num_threads)>;

// Registers an executor under `name` (replacing an earlier one; a new name
// goes last in executor_names()). The runtime registers "serial" and
// "parallel" itself; the comparison executors register through
// register_comparison_executors() (cpp/comparison/). Thread-safe.
void register_executor(const std::string& name, ExecutorFactory factory);
// Builds an executor by name ("serial", "parallel", ...); throws
// std::invalid_argument naming `executor` for unknown names, `num_threads`
// for invalid counts. The only place that maps names to executors.
std::unique_ptr<Executor> make_executor(const std::string& name, unsigned num_threads);
// The batch runner for executor `name`, with the same checks.
std::unique_ptr<BatchRunner> make_batch_runner(const std::string& name, unsigned num_threads);
// The registered executors' names, in registration order.
std::vector<std::string> executor_names();
// Whether executor `name` runs every handler on the calling thread: what a model
// whose handlers hold a process-wide lock (Python's GIL) needs.
bool runs_on_calling_thread(const std::string& name);

// The most threads an executor may use: 8 per CPU this process may use
// (sched_getaffinity), at least 64. More only spin against each other at
// every barrier (1024 threads took 79 s for one 8x8 step): refused.
unsigned max_num_threads();
// The rule as every error states it: "[1, N] (8 per usable CPU, at least 64)".
// The one text of it: the bindings and Python's option parser read it from here.
std::string num_threads_range();
// The error for a num_threads outside [1, max_num_threads()]; `got` as the caller wrote it.
std::invalid_argument num_threads_error(const std::string& got);
// num_threads_error unless num_threads is in [1, max_num_threads()].
void check_num_threads(std::uint64_t num_threads);

}  // namespace seer
