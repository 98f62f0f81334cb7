// What runs the parallel executor's rounds: thread pool, barrier, per-worker
// state (wake calendars, notice outboxes, node pools) and the executive
// lists, shared by every instance stepped together.
// It owns no instance: each ParallelInstance belongs to its ParallelExecutor
// and is lent to the engine for one run_steps() or initialize() call.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "adaptive_pool.hpp"
#include "executive_list.hpp"
#include "executor.hpp"
#include "local_queue.hpp"
#include "parallel_instance.hpp"
#include "round_barrier.hpp"
#include "thread_pool.hpp"

namespace seer {

class ParallelEngine {
 public:
  // Starts no thread (the pool starts on first use); allocates.
  explicit ParallelEngine(unsigned num_threads);
  ~ParallelEngine();
  // The pool's size: the most threads a step uses. Thread-safe.
  unsigned num_threads() const { return pool_.size(); }
  // Threads the last run_steps() ran on, and how it went (AdaptivePool).
  // Not thread-safe (read between steps, like every method below).
  unsigned last_threads() const { return last_timing_.threads; }
  const StepTiming& last_timing() const { return last_timing_; }
  const AdaptivePool& adaptive() const { return adaptive_; }
  // Threads the next run_steps() would use: the adaptive pool's choice
  // (always 1 for a pool of one). When next_step_runs_serial_loop(),
  // executors run the serial event loop instead (ParallelExecutor::run_step)
  // and report it with record_serial_step(). Not thread-safe.
  unsigned next_threads() const { return adaptive_.next_threads(); }
  // Whether the next step runs the serial event loop (ParallelExecutor): it
  // runs on one thread, and the pool has one thread or its shed is confirmed
  // (AdaptivePool::reduction_confirmed). A tentative shed steps in rounds on
  // the caller alone instead: the loop's first steps would move the pending
  // events out of the queues, and the steps in rounds after the next probe
  // would move them back, which cost a PCS 64x64 env ~25 steps' worth per
  // shed that the next probe undid; rounds on one thread cost ~1.3x a serial
  // loop step. Not thread-safe.
  //
  // Not on a confirmed shed of many pending events (more nodes in the pools'
  // blocks than kSerialLoopMaxNodes): there the steps stay in rounds on the
  // caller. A pending event is in the loop's calendar or in the queues, and
  // moving them all between the two means, at some moment, two full layouts
  // in memory (PCS 256x256, 1M events: 442 MB against 316 MB); and at that
  // size the loop does not pay: rounds on one thread took 0.94x its time at
  // PCS 256x256, against 1.16x at 128x128 and 1.35x at 64x64 (262k and 65k
  // events; 2-vCPU VM). Not thread-safe.
  bool next_step_runs_serial_loop() const {
    return adaptive_.next_threads() == 1 &&
           (pool_.size() == 1 ||
            (adaptive_.reduction_confirmed() && node_capacity() <= serial_loop_max_nodes_));
  }
  static constexpr std::size_t kSerialLoopMaxNodes = std::size_t{1} << 19;
  // Test hook: another bound than kSerialLoopMaxNodes.
  void set_serial_loop_max_nodes_for_testing(std::size_t nodes) { serial_loop_max_nodes_ = nodes; }
  // Feeds the adaptive pool a step (or batch step) that ran the serial loop
  // on the calling thread, timed by a StepClock (wall, maybe run delay) and
  // with its events set; so probes still come due. Not thread-safe; does not
  // allocate.
  void record_serial_step(StepTiming timing);
  // Whether that step's StepClock should read the caller's run delay too.
  bool serial_step_wants_run_delay() const { return adaptive_.wants_run_delay(); }
  // Turns the adaptive pool on (the default) or off (every step uses every
  // thread).
  void set_adaptive(bool enabled) { adaptive_.set_enabled(enabled); }
  // Test hook: worker `worker` sleeps `delay` at the start of every round
  // (and of the begin phase) while it takes part, as if it had lost its
  // core; zero delay turns it off.
  void set_stall_for_testing(unsigned worker, std::chrono::microseconds delay) {
    stall_worker_ = worker;
    stall_delay_ = delay;
  }
  // Wakes parked workers for a step that is coming soon, unless that step
  // runs on one thread (a woken worker would spin for nothing, taking a core
  // the caller may need on a busy machine). Same threading rules as
  // ThreadPool::prewake(); does not block.
  void prewake() {
    if (adaptive_.next_threads() > 1) pool_.prewake();
  }
  // Joins the workers (ThreadPool::stop); the next run starts fresh ones.
  void release_threads() { pool_.stop(); }
  // The next steps run the serial loop until a probe pays
  // (AdaptivePool::start_reduced). Not thread-safe.
  void start_on_one_thread(const std::string& why) { adaptive_.start_reduced(why); }

  // One step of each instance, all in one parallel region: instances[i]
  // runs windows[i], sets stats[i] and failures[i] (null where none); a
  // failing instance stops, the others complete their step. Blocks until
  // the region ends. Not thread-safe (one caller at a time, like every
  // method below); allocates the batch's offsets, and more when the batch's
  // layout changes.
  void run_steps(ParallelInstance* const* instances, const StepWindow* windows, StepStats* stats,
                 std::exception_ptr* failures, std::size_t count);
  // One step of `instance` in rounds on the calling thread alone, whatever
  // the adaptive pool would choose, and unknown to it (no timing recorded,
  // no shed or probe comes due): a checked step, whose write check needs one
  // handler at a time, runs so without moving a pending event. Sets `stats`
  // and `failure` (null when none) as run_steps() does. Blocks; not
  // thread-safe.
  void run_step_on_caller(ParallelInstance& instance, const StepWindow& window, StepStats& stats,
                          std::exception_ptr& failure);
  // Whether the last region ran a decision window of `instance` that ended
  // before its step (StepWindow::step_end), nothing ran since but pool work
  // (parallel_for), and the next step would use as many threads: then
  // continue_step() may run its next window. Not thread-safe.
  bool can_continue(const ParallelInstance& instance) const;
  // The next window of that step, without the begin read of every entity's
  // queue: the wake calendars kept from the last window, plus `touched`,
  // the entities whose queues got events since (ParallelExecutor::insert).
  // Otherwise as run_steps() for one instance. Blocks; not thread-safe.
  void continue_step(ParallelInstance& instance, const StepWindow& window, StepStats& stats,
                     std::exception_ptr& failure, const std::vector<EntityId>& touched);
  // Forgets an open step (the executor's events changed another way).
  void forget_open_step() { continuable_ = nullptr; }
  // on_init of every entity of `instance`, in parallel; rethrows the failure
  // of the smallest key. Blocks.
  void initialize(ParallelInstance& instance);
  // Pushes every event of lists[0, count) into `instance`'s queues on the
  // pool, each thread the targets of its slice (with its own node pool), and
  // appends the targets to `touched`; the order of a target's events is the
  // lists' order. Between regions only; rethrows the first exception (an
  // allocation failure: the events pushed so far stay). Blocks.
  void insert_lists(ParallelInstance& instance, const std::vector<Event>* lists,
                    std::size_t count, std::vector<EntityId>& touched);
  // fn(i) for i in [0, n) on the pool; rethrows the first exception. Blocks.
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn);
  // Node pool of the calling thread outside a parallel region (worker 0's).
  NodePool& caller_pool();
  // Evens out the workers' free event nodes (call between runs only).
  void balance_node_pools();
  // Frees the node pools' blocks if no node is in use (every instance's
  // events left the queues); returns whether it did. Between runs only.
  bool release_idle_nodes();
  // If no node is in use: relinks every free node into the caller's pool in
  // address order, block by block (a bulk insert then writes nodes one after
  // another, not scattered ones: each freed node cost a cache miss to find
  // the next); returns whether it did. Between runs only.
  bool relink_idle_nodes();
  // Nodes in the pools' blocks, free or holding events. Between runs only.
  std::size_t node_capacity() const;
  // Hands the event of every node `instance`'s queues hold to `take` (in the
  // order of the node blocks, not the key order) and frees the blocks one by
  // one as it goes, so that the events' new home fills as the old one
  // empties and both are never full at once (a confirmed shed: the serial
  // loop's calendar takes them, ParallelExecutor::run_serial_step). Then
  // every queue is empty with its key array freed, and the pools hold no
  // block. Only when no other instance holds a node of this engine. If
  // `take` throws, every event it did not take is back in its queue (none
  // lost or doubled) and the exception propagates. Between runs only.
  void move_out_events(ParallelInstance& instance, const std::function<void(const Event&)>& take);

 private:
  struct Worker;
  struct Batch;
  // run_steps() on `team` threads; `record`: tell the adaptive pool.
  // `continued`: continue the open step (continue_step), these entities touched.
  void run_region(ParallelInstance* const* instances, const StepWindow* windows, StepStats* stats,
                  std::exception_ptr* failures, std::size_t count, unsigned team, bool record,
                  const std::vector<EntityId>* continued = nullptr);
  void worker_step(unsigned w, Batch& batch);
  void begin_slice(Worker& me, Batch& batch);
  // continue_step's begin phase: the touched entities of my slice into my
  // calendars, and the last round's notices.
  void continue_slice(Worker& me, Batch& batch);
  // Fills me.ready with my entities that have an event below their
  // instance's horizon, in id order, and starts my LB; returns how many.
  std::size_t list_ready(Worker& me, Batch& batch);
  // Index in the batch of the first instance with entities in my slice.
  std::size_t first_instance(const Worker& me, const Batch& batch) const;
  // Moves the wake notices the last round sent me into my calendars.
  void take_notices(Worker& me, Batch& batch);
  void steal(Worker& me, unsigned w, Batch& batch, std::int64_t budget_nanos);
  void wait_at_barrier(Worker& me, Batch& batch);
  void maybe_stall(unsigned w);
  void drain_list(Worker& me, Batch& batch, ExecutiveList& list);
  void drain_entity(Worker& me, ParallelInstance& inst, std::size_t i, EntityId e, double horizon);
  void end_round(Batch& batch);
  // Moves boundary_ into `timing` (wall, waits, boundary_nanos).
  void add_boundary(StepTiming& timing);
  // `continuing`: keep the outboxes' notices (continue_step).
  void prepare(Batch& batch, bool continuing);

  ThreadPool pool_;
  RoundBarrier barrier_;
  // Threads taking part in the current region (1 .. pool size): workers
  // [0, active_) own slices; the others return at once.
  unsigned active_;
  AdaptivePool adaptive_;
  StepTiming last_timing_;
  // The boundary's pool regions (parallel_for) since the last run_steps():
  // their wall time and the caller's waits for late workers. The boundary
  // follows the rounds, so they are counted with the next run_steps()
  // (under load a 2-thread step lost most of its time there, unseen by the
  // round barriers: Aircraft 1024, 2-thread steps 7x a 1-thread one).
  StepTiming boundary_;
  std::size_t serial_loop_max_nodes_ = kSerialLoopMaxNodes;
  unsigned stall_worker_ = 0;
  std::chrono::microseconds stall_delay_{0};
  std::unique_ptr<Worker[]> workers_;
  // One list per worker, covering the worker's slice of the batch's entities.
  std::vector<std::unique_ptr<ExecutiveList>> executive_;
  std::vector<std::uint32_t> instance_of_;  // global entity id -> instance
  // Counts barriers (the begin phase's and every round's): its parity picks
  // the outbox a round's wake notices go to.
  std::uint32_t round_ = 0;
  // The instance whose step the last region left open (can_continue), if any.
  const ParallelInstance* continuable_ = nullptr;
  // Nodes in the pools' blocks during run_steps (the memory guard; see
  // Worker::count_new_block).
  alignas(64) std::atomic<std::uint64_t> nodes_{0};
};

}  // namespace seer
