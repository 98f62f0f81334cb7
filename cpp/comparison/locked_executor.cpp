#include "locked_executor.hpp"

#include <algorithm>
#include <thread>

#include "seer/errors.hpp"

namespace seer {

void LockedExecutor::bind(Dispatcher& dispatcher) {
  dispatcher_ = &dispatcher;
  lookahead_ = dispatcher.spec().lookahead;
  busy_.assign(dispatcher.num_entities(), 0);
  parked_.assign(dispatcher.num_entities(), {});
}

void LockedExecutor::clear() {
  heap_.clear();
  active_.clear();
  for (auto& p : parked_) p.clear();
}

void LockedExecutor::collect_pending(std::vector<Event>& out) const {
  heap_.for_each([&out](const Event& e) { out.push_back(e); });
}

void LockedExecutor::initialize() {
  Buffer buffer;
  for (EntityId e = 0; e < dispatcher_->num_entities(); ++e) dispatcher_->init(e, buffer);
  for (const Event& ev : buffer.events) heap_.push(ev);
}

void LockedExecutor::parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
  std::mutex m;
  std::size_t next = 0;
  std::exception_ptr error;
  pool_.run([&](unsigned) {
    for (;;) {
      std::size_t i;
      {
        std::lock_guard<std::mutex> lock(m);
        if (next >= n || error) return;
        i = next++;
      }
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        if (!error) error = std::current_exception();
      }
    }
  });
  if (error) std::rethrow_exception(error);
}

void LockedExecutor::run_step(const StepWindow& window, StepStats& stats) {
  // Step-begin and actions in serial order, straight into the queue.
  Buffer buffer;
  for (EntityId e = 0; e < dispatcher_->num_entities(); ++e) {
    dispatcher_->step_begin(e, window.t_begin, buffer);
  }
  for (std::uint32_t a = 0; a < window.num_agents; ++a) {
    if (window.alive == nullptr || window.alive[a]) {
      dispatcher_->action(a, window.t_begin, window.actions[a], buffer);
    }
  }
  for (const Event& ev : buffer.events) heap_.push(ev);
  failed_ = false;
  failure_ = nullptr;
  pool_.run([&](unsigned) { worker(window, stats); });
  stats.rounds = 1;
  if (failure_) std::rethrow_exception(failure_);
}

void LockedExecutor::worker(const StepWindow& window, StepStats& stats) {
  Buffer buffer;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (failed_) return;
    const bool have = !heap_.empty() && heap_.top_time() < window.t_end;
    if (!have && active_.empty()) return;  // step finished
    if (!have || (!active_.empty() && heap_.top_time() >= *active_.begin() + lookahead_)) {
      // Nothing safe yet: let the threads in flight finish.
      lock.unlock();
      std::this_thread::yield();
      lock.lock();
      continue;
    }
    const Event event = heap_.pop();
    active_.insert(event.time);
    if (busy_[event.target]) {  // its entity is held: park it, try the next
      parked_[event.target].push_back(event);
      continue;
    }
    if (window.event_budget != 0 && stats.events >= window.event_budget) {
      failed_ = true;
      try {
        throw_event_budget(window);
      } catch (...) {
        failure_ = std::current_exception();
      }
      return;
    }
    ++stats.events;
    if (event.source != event.target) ++stats.cross_events;
    busy_[event.target] = 1;
    lock.unlock();
    buffer.events.clear();
    std::exception_ptr error;
    try {
      dispatcher_->event(event, buffer);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    busy_[event.target] = 0;
    active_.erase(active_.find(event.time));
    if (error) {
      failed_ = true;
      if (!failure_) failure_ = error;
      return;
    }
    for (const Event& ev : buffer.events) heap_.push(ev);
    for (const Event& ev : parked_[event.target]) {  // back in key order via the heap
      active_.erase(active_.find(ev.time));
      heap_.push(ev);
    }
    parked_[event.target].clear();
  }
}

}  // namespace seer
