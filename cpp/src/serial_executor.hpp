// The serial executor: one global priority queue in key order, one thread.
// It defines the correct output (the serial order, docs/runtime.md); keep it
// short and obviously right.
#pragma once

#include <vector>

#include "executor.hpp"
#include "serial_event_queue.hpp"

namespace seer {

class SerialExecutor final : public Executor, private EventSink {
 public:
  std::string name() const override { return "serial"; }
  unsigned num_threads() const override { return 1; }
  void bind(Dispatcher& dispatcher) override { dispatcher_ = &dispatcher; }
  void clear() override { queue_.clear(); }
  void initialize() override;
  void insert(const Event& event) override { queue_.push(event); }
  void collect_pending(std::vector<Event>& out) const override;
  bool pending_in_place(std::vector<const Event*>& out) const override {
    queue_.for_each([&out](const Event& e) { out.push_back(&e); });
    return true;
  }
  std::size_t pending_count() const override { return queue_.size(); }
  void run_step(const StepWindow& window, StepStats& stats) override;
  // The one-at-a-time reference of event-driven decisions: run_step's work
  // without actions, stopping as soon as a handler asks for a decision
  // (true; the window's later events stay pending) or at the window's end.
  bool run_until_decision(const StepWindow& window, StepStats& stats);
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) override {
    for (std::size_t i = 0; i < n; ++i) fn(i);
  }
  // Removes the pending events below `t`, in key order, each after fn(event)
  // returned (if fn throws, that event stays pending). The parallel
  // executor's one-thread loop hands them to its per-entity queues this way.
  template <class Fn>
  void take_before(double t, Fn&& fn) {
    while (queue_.top_time() < t) {
      fn(queue_.top());
      queue_.pop();
    }
  }
  // Room for `n` more pending events without growing (a bulk insert).
  void reserve(std::size_t n) { queue_.reserve(n); }
  // Removes every pending event, in no particular order, offering the
  // queue's emptied memory to release(begin, bytes) as it goes
  // (SerialEventQueue::take_all: if fn throws, the events it did not take
  // stay pending).
  template <class Fn, class Release>
  void take_all(Fn&& fn, Release&& release) {
    queue_.take_all(fn, release);
  }

 private:
  void emit(const Event& event) override { queue_.push(event); }

  Dispatcher* dispatcher_ = nullptr;
  SerialEventQueue queue_;  // every pending event, in key order
};

}  // namespace seer
