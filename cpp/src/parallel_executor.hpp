// The parallel executor: the dual-layer event queue on a thread pool.
//
// Per step:
//   begin    every worker runs on_step_begin/on_action for its slice of
//            entities and notes in its wake calendar (one per instance of
//            the slice) when each entity's next event may be; barrier. The
//            first LB is t_begin: nothing pending is earlier.
//   rounds   with H = min(LB + L, t_end): each worker takes the wake notices
//            sent to it last round, pushes the entities of its calendars
//            with an entry below H onto its own executive list and seals it;
//            it drains each one's events below H (self-events go straight
//            into the entity's heap, others into the target's inbox, with a
//            notice to the target's owner), notes where each drained entity
//            stands now, then steals from the other workers' sealed lists;
//            barrier, which computes the next LB from what workers saw.
//            Stop when LB >= t_end. No round reads the queue of an entity
//            with nothing to do (docs/runtime.md, "Executors": Rounds).
// Why it is serial-equivalent: a cross-entity event is scheduled at >= its
// sender's now + L >= LB + L >= H, so every event below H already exists (or
// is a self-event created by its own entity in key order) when its round
// starts, and each entity handles its events in key order with entity-local
// handlers. Errors: each entity stops at its own first failure; the failure
// with the smallest serial key is reported, as the serial executor would.
//
// Who does what: ParallelInstance holds one env's queues and step state;
// ParallelEngine (threads, barrier, executive lists) runs the rounds over
// one or more instances; ParallelExecutor is the Executor of one env, owning
// its instance and running it on an engine. Several env instances (a vector
// env) can share one engine and step together in one call
// (ParallelBatchRunner): the slices, the executive lists and the rounds then
// span every instance, each instance keeping its own horizon.
//
// A pool of one runs the serial loop: when a step would run on one thread
// (num_threads == 1, or the adaptive pool shed the others), there is nothing
// to gain from rounds, so the env steps with the serial executor's loop on
// the caller (OneThreadLoop, which holds a SerialExecutor of its own). A pending
// event sits either there or in its entity's queue, and each step moves
// only the events it handles into the structure it steps, so shedding
// threads and probing for more cost about one step's events, not a pass
// over every pending one (one_thread_loop.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "executor.hpp"
#include "parallel_engine.hpp"
#include "parallel_instance.hpp"
#include "one_thread_loop.hpp"

namespace seer {

class ParallelExecutor final : public Executor {
 public:
  // Runs on its own engine of `num_threads` threads.
  explicit ParallelExecutor(unsigned num_threads);
  // Runs on a shared engine (vector envs).
  explicit ParallelExecutor(std::shared_ptr<ParallelEngine> engine);
  ~ParallelExecutor() override;

  std::string name() const override { return "parallel"; }
  unsigned num_threads() const override { return engine_->num_threads(); }
  void prewake() override { engine_->prewake(); }
  // The adaptive pool's reason, plus "serial loop" when the last step ran it.
  std::string thread_decision() const override;
  // The engine this env runs on (tests reach the adaptive pool through it).
  ParallelEngine& engine() { return *engine_; }
  void release_threads() override { engine_->release_threads(); }
  void start_on_one_thread(const std::string& why) override { engine_->start_on_one_thread(why); }
  void bind(Dispatcher& dispatcher) override;
  void clear() override;
  void release_storage() override;
  void initialize() override;
  void insert(const Event& event) override;
  void collect_pending(std::vector<Event>& out) const override;
  bool pending_in_place(std::vector<const Event*>& out) const override;
  void insert_all(const Event* events, std::size_t n) override;
  // Many events into the queues: on the pool (ParallelEngine::insert_lists).
  void insert_lists(const std::vector<Event>* lists, std::size_t count) override;
  std::size_t pending_count() const override;
  void run_step(const StepWindow& window, StepStats& stats) override;
  // A checked step, one handler at a time on the caller, where the events
  // are: the serial loop when they are in its calendar (a pool of one, a
  // confirmed shed, check=True's episodes), else rounds on the caller alone
  // (ParallelEngine::run_step_on_caller). No pending event moves for it but
  // what a step of that kind moves anyway, and the adaptive pool is not told.
  bool run_step_one_at_a_time(const StepWindow& window, StepStats& stats) override;
  // on_init of every entity in id order on the caller; the events go to the
  // calendar (the serial loop's, which check=True's steps then run).
  bool initialize_one_at_a_time() override;
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) override;

  // This env's queues and step state, for the engine that runs it. Its
  // queues hold the events of a step in rounds once before_rounds() ran.
  ParallelInstance& instance() { return instance_; }
  // Whether the last step ran the serial loop (one thread) rather than rounds.
  bool ran_serial_loop() const { return ran_serial_loop_; }
  // Events in the serial loop's calendar (the rest are in the queues).
  std::size_t calendar_size() const { return one_thread_.size(); }
  // Test hook: adds an event to the calendar (as a bulk move's receiver does).
  void one_thread_insert_for_testing(const Event& event) {
    one_thread_.insert(event);
    calendar_released_ = false;
  }
  // Before the engine runs `window` in rounds (run_step(), ParallelBatchRunner):
  // moves the one-thread loop's events below its end into the queues. Not
  // during a step; allocates only if heaps or node pools grow.
  void before_rounds(const StepWindow& window);
  // One step with the serial loop on the calling thread (OneThreadLoop).
  // Sets stats.threads to 1; throws what the serial executor throws. Does
  // not tell the engine (the caller records the step: run_step(),
  // ParallelBatchRunner).
  void run_serial_step(const StepWindow& window, StepStats& stats);

 private:
  // insert() of events[0, n): one check of where they go, then each one's work.
  void insert_some(const Event* events, std::size_t n);
  // Frees the (empty) queues' key arrays and, if no instance on the engine
  // holds an event, the engine's node blocks.
  void release_queue_storage();
  // Whether the queues may hold events (false: known empty).
  bool queues_hold_events() const;

  std::shared_ptr<ParallelEngine> engine_;
  // The engine is this executor's alone (not a vector env's shared one):
  // the node blocks then hold only this instance's events.
  bool owns_engine_ = false;
  ParallelInstance instance_;
  OneThreadLoop one_thread_;  // the one-thread steps' loop and calendar
  bool ran_serial_loop_ = false;  // the last step ran one_thread_'s loop
  // Whether the queues' (calendar's) storage was freed when they last
  // became empty; reset by whatever can fill them again (a step of their
  // kind, an insert, initialize()).
  bool queues_released_ = false;
  bool calendar_released_ = false;
  // The targets of insert() since the last step: the next decision window
  // of an open step (ParallelEngine::continue_step) puts them in the
  // calendars instead of reading every queue.
  std::vector<EntityId> touched_;
};

// The vector env's runner for "parallel": every instance on one shared
// engine, a batch step in one parallel region.
class ParallelBatchRunner final : public BatchRunner {
 public:
  explicit ParallelBatchRunner(unsigned num_threads);
  std::unique_ptr<Executor> add_instance() override;
  void run_steps(const std::size_t* members, const StepWindow* windows, StepStats* stats,
                 std::exception_ptr* failures, std::size_t count) override;
  void prewake() override { engine_->prewake(); }  // one pool for the whole batch
  void release_threads() override { engine_->release_threads(); }
  void start_on_one_thread(const std::string& why) override { engine_->start_on_one_thread(why); }

 private:
  std::shared_ptr<ParallelEngine> engine_;
  std::vector<ParallelExecutor*> members_;  // in add_instance() order
  std::vector<ParallelInstance*> batch_;    // scratch, reused across steps
};

}  // namespace seer
