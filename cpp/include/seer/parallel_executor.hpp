// The parallel executor: the dual-layer event queue on a thread pool.
//
// Per step:
//   phase 0  every worker runs on_step_begin/on_action for its slice of
//            entities; barrier. The first LB is t_begin: nothing pending is
//            earlier, so no pass over every entity is needed.
//   rounds   with H = min(LB + L, t_end): each worker scans its slice,
//            pushes the entities holding an event below H onto its own
//            executive list and seals it; it drains each one's events below H
//            (self-events go straight into the entity's heap, others into the
//            target's inbox), then steals from the other workers' sealed
//            lists; barrier, which computes the next LB from what workers
//            saw. Stop when LB >= t_end.
// Why it is serial-equivalent: a cross-entity event is scheduled at >= its
// sender's now + L >= LB + L >= H, so every event below H already exists (or
// is a self-event created by its own entity in key order) when its round
// starts, and each entity handles its events in key order with entity-local
// handlers. Errors: each entity stops at its own first failure; the failure
// with the smallest serial key is reported, as the serial executor would.
//
// Several env instances (a vector env) can share one ParallelEngine and step
// together in one call: the slices, the executive lists and the rounds then
// span every instance, each instance keeping its own horizon.
#pragma once

#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <tuple>

#include "seer/executor.hpp"
#include "seer/local_queue.hpp"
#include "seer/parallel_engine.hpp"

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
  void bind(Dispatcher& dispatcher) override;
  void clear() override;
  void initialize() override;
  void insert(const Event& event) override;
  void collect_pending(std::vector<Event>& out) const override;
  std::size_t pending_count() const override;
  void run_step(const StepWindow& window, StepStats& stats) override;
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) override;

  const std::shared_ptr<ParallelEngine>& engine() const { return engine_; }

 private:
  friend class ParallelEngine;
  // Serial order of a failure: (phase, time, source, seq); phase 0 step
  // begin, 1 actions, 2 events.
  using FailureKey = std::tuple<int, double, std::uint64_t, std::uint64_t>;

  void fail(const FailureKey& key);
  void rethrow_failure();

  std::shared_ptr<ParallelEngine> engine_;
  Dispatcher* dispatcher_ = nullptr;
  std::uint32_t num_entities_ = 0;
  double lookahead_ = 0.0;
  std::unique_ptr<LocalQueue[]> queues_;
  void publish_top(EntityId e) { queues_[e].publish(); }
  // Starts loading what draining e will touch first: its queue (one line,
  // holding the addresses of the rest), its heap's keys and earliest event,
  // its runtime record and its state. Entities are drained once or twice per
  // round, so without this each visit begins with a chain of cache misses.
  // The scan has just read e's queue line, so issuing these does not wait.
  void prefetch(EntityId e) const {
    __builtin_prefetch(&queues_[e]);
    queues_[e].prefetch_heap();
    dispatcher_->prefetch(e);
  }

  // Step state, owned by the engine while it runs this instance's step.
  const StepWindow* window_ = nullptr;
  double horizon_ = 0.0;
  bool finished_ = false;
  std::uint64_t rounds_ = 0;
  alignas(64) std::atomic<std::uint64_t> events_in_step_{0};
  alignas(64) std::atomic<bool> failed_{false};
  std::mutex failure_mutex_;
  FailureKey failure_key_;
  std::exception_ptr failure_;
};

}  // namespace seer
