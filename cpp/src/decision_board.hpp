// Event-driven decisions: which agents wait for an action, since when, and
// the events that reached them while they waited.
//
// A handler of agent `a` calls ctx.request_decision() at time t: `a` then
// waits (is "parked") until the action arrives. The dispatcher holds every
// later event of `a` here, in the order the executor hands them over (its
// key order), instead of running it. The Simulation answers a window's
// requests together and runs each agent's held events after its action
// (decision_steps.cpp).
//
// Slot `a` is written only by the thread that runs a's handlers (the
// event-locality contract), so the board needs no lock; the count and the
// list of agents that asked are the shared words, touched once per request
// (the list spares the Simulation a pass over every agent per window).
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "seer/context.hpp"
#include "seer/event.hpp"

namespace seer {

class DecisionBoard final : public DecisionSink {
 public:
  // Sized for `agents` agents; every agent running.
  void resize(std::uint32_t agents) {
    parked_.assign(agents, 0);
    since_.assign(agents, 0.0);
    held_.assign(agents, {});
    asked_.assign(agents, 0);
    count_.store(0, std::memory_order_relaxed);
    asked_count_.store(0, std::memory_order_relaxed);
  }
  void clear() { resize(static_cast<std::uint32_t>(parked_.size())); }

  std::uint32_t agents() const { return static_cast<std::uint32_t>(parked_.size()); }
  bool parked(EntityId a) const { return a < parked_.size() && parked_[a] != 0; }
  // When a's request was made (valid while parked).
  double since(EntityId a) const { return since_[a]; }
  // Agents waiting for an action (read between windows, not during one).
  std::uint32_t waiting() const { return count_.load(std::memory_order_relaxed); }

  // a asks at time t; false if it is already waiting (the caller reports it).
  bool park(EntityId a, double t) override {
    if (parked_[a] != 0) return false;
    parked_[a] = 1;
    since_[a] = t;
    count_.fetch_add(1, std::memory_order_relaxed);
    note_asked(a);
    return true;
  }
  // The agents parked since the last forget_asked() (each at most once: an
  // agent leaves the board only when answered, after the Simulation
  // collected the requests), or every agent if more were noted than fit
  // (the caller then filters with parked()). Between windows only.
  template <class Fn>
  void for_each_asked(Fn&& fn) const {
    const std::uint32_t n = asked_count_.load(std::memory_order_relaxed);
    if (n > asked_.size()) {
      for (EntityId a = 0; a < agents(); ++a) fn(a);
      return;
    }
    for (std::uint32_t i = 0; i < n; ++i) fn(asked_[i]);
  }
  void forget_asked() { asked_count_.store(0, std::memory_order_relaxed); }
  void unpark(EntityId a) {
    parked_[a] = 0;
    count_.fetch_sub(1, std::memory_order_relaxed);
  }
  // An event that reached a parked agent: kept, in arrival order.
  void hold(const Event& event) { held_[event.target].push_back(event); }
  // Whether held events are held (always, but for the tests' planted bug:
  // a waiting agent's events then run before its action arrives).
  bool holding() const { return holding_; }
  void plant_early_release_for_testing() { holding_ = false; }
  const std::vector<Event>& held(EntityId a) const { return held_[a]; }
  std::vector<Event> take_held(EntityId a) { return std::exchange(held_[a], {}); }
  // Restores a's record (load()).
  void restore(EntityId a, double since, std::vector<Event> held) {
    if (parked_[a] == 0) {
      count_.fetch_add(1, std::memory_order_relaxed);
      note_asked(a);
    }
    parked_[a] = 1;
    since_[a] = since;
    held_[a] = std::move(held);
  }

 private:
  void note_asked(EntityId a) {
    // relaxed: a slot per request; the region's end orders it for the reader.
    const std::uint32_t i = asked_count_.fetch_add(1, std::memory_order_relaxed);
    if (i < asked_.size()) asked_[i] = a;
  }

  std::vector<std::uint8_t> parked_;
  std::vector<double> since_;
  std::vector<std::vector<Event>> held_;
  std::atomic<std::uint32_t> count_{0};
  std::vector<EntityId> asked_;  // note_asked()'s slots, asked_count_ of them
  std::atomic<std::uint32_t> asked_count_{0};
  bool holding_ = true;
};

}  // namespace seer
