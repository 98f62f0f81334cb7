// Comparison executor: a central-queue engine. One priority queue of events
// behind a mutex; threads pop events one at a time and hold the target entity
// while handling it. Models engines with a shared event list
// (docs/concepts.md, "Executors"), tuned as such engines are: the lock is held
// only to pop and to push, and an event whose entity is busy is parked so
// others can proceed.
//
// Safety: the queue's minimum event may run only if its time is below
// min(time of every event in flight or parked) + L: nothing still running can
// then send it a predecessor.
#pragma once

#include <mutex>
#include <set>
#include <vector>

#include "event_heap.hpp"
#include "executor.hpp"
#include "thread_pool.hpp"

namespace seer {

class LockedExecutor final : public Executor {
 public:
  explicit LockedExecutor(unsigned num_threads) : pool_(num_threads) {}
  std::string name() const override { return "locked"; }
  unsigned num_threads() const override { return pool_.size(); }
  void prewake() override { pool_.prewake(); }
  void release_threads() override { pool_.stop(); }
  void bind(Dispatcher& dispatcher) override;
  void clear() override;
  void initialize() override;
  void insert(const Event& event) override { heap_.push(event); }
  void collect_pending(std::vector<Event>& out) const override;
  std::size_t pending_count() const override { return heap_.size(); }
  void run_step(const StepWindow& window, StepStats& stats) override;
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) override;

 private:
  // Collects a handler's events; they enter the queue under the lock afterwards.
  struct Buffer final : EventSink {
    void emit(const Event& event) override { events.push_back(event); }
    std::vector<Event> events;
  };
  void worker(const StepWindow& window, StepStats& stats);

  ThreadPool pool_;
  Dispatcher* dispatcher_ = nullptr;
  double lookahead_ = 0.0;
  std::mutex mutex_;  // guards everything below
  EventHeap heap_;
  std::vector<std::uint8_t> busy_;
  std::vector<std::vector<Event>> parked_;
  std::multiset<double> active_;  // times of events in flight or parked
  bool failed_ = false;
  std::exception_ptr failure_;
};

}  // namespace seer
