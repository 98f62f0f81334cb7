// The parallel executor: the dual-layer event queue on a thread pool.
//
// Per step:
//   phase 0  every worker runs on_step_begin/on_action for its slice of
//            entities; then a barrier computes LB, the earliest pending time.
//   rounds   with H = min(LB + L, t_end): each worker scans its slice and
//            pushes the entities holding an event below H onto the executive
//            list; barrier; workers pop entities and drain each one's events
//            below H (self-events go straight into the entity's heap, others
//            into the target's inbox); barrier, which computes the next LB
//            from what workers saw. Stop when LB >= t_end.
// Why it is serial-equivalent: a cross-entity event is scheduled at >= its
// sender's now + L >= LB + L >= H, so every event below H already exists (or
// is a self-event created by its own entity in key order) when its round
// starts, and each entity handles its events in key order with entity-local
// handlers. Errors: each entity stops at its own first failure; the failure
// with the smallest serial key is reported, as the serial executor would.
#pragma once

#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <tuple>

#include "seer/executive_list.hpp"
#include "seer/executor.hpp"
#include "seer/local_queue.hpp"
#include "seer/spin_barrier.hpp"
#include "seer/thread_pool.hpp"

namespace seer {

class ParallelExecutor final : public Executor {
 public:
  explicit ParallelExecutor(unsigned num_threads);
  ~ParallelExecutor() override;

  std::string name() const override { return "parallel"; }
  unsigned num_threads() const override { return pool_.size(); }
  void bind(Dispatcher& dispatcher) override;
  void clear() override;
  void initialize() override;
  void insert(const Event& event) override { queues_[event.target].push_local(event); }
  void collect_pending(std::vector<Event>& out) const override;
  std::size_t pending_count() const override;
  void run_step(const StepWindow& window, StepStats& stats) override;
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) override;

 private:
  // Where a worker's handlers schedule: own heap for self-events of the
  // entity it holds, the target's inbox otherwise.
  struct alignas(64) Worker final : EventSink {
    void emit(const Event& event) override;
    ParallelExecutor* owner = nullptr;
    EntityId current = 0;
    NodePool pool;
    double local_min = 0.0;  // earliest pending time this worker saw this round
    std::uint64_t events = 0;
    std::uint64_t cross_events = 0;
    std::uint64_t unreported = 0;  // events not yet added to events_in_step_
  };
  // Serial order of a failure: (phase, time, source, seq); phase 0 step
  // begin, 1 actions, 2 events.
  using FailureKey = std::tuple<int, double, std::uint64_t, std::uint64_t>;

  std::pair<EntityId, EntityId> slice(unsigned w) const;
  void worker_step(unsigned w, const StepWindow& window);
  void begin_entities(Worker& me, EntityId lo, EntityId hi, const StepWindow& window);
  void drain_entity(Worker& me, EntityId e, double horizon, const StepWindow& window);
  void count_event(Worker& me, const StepWindow& window);
  void fail(const FailureKey& key);
  void end_round(double t_end);  // run by the last thread at a barrier
  void rethrow_failure();

  ThreadPool pool_;
  Dispatcher* dispatcher_ = nullptr;
  std::uint32_t num_entities_ = 0;
  std::unique_ptr<LocalQueue[]> queues_;
  std::unique_ptr<ExecutiveList> executive_;
  std::unique_ptr<Worker[]> workers_;
  SpinBarrier barrier_;

  // Round state, written by the last thread at a barrier, read after it.
  double horizon_ = 0.0;
  bool finished_ = false;
  std::uint64_t rounds_ = 0;
  double lookahead_ = 0.0;

  alignas(64) std::atomic<std::uint64_t> events_in_step_{0};
  alignas(64) std::atomic<bool> failed_{false};
  std::mutex failure_mutex_;
  FailureKey failure_key_;
  std::exception_ptr failure_;
};

}  // namespace seer
