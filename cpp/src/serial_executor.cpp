#include "serial_executor.hpp"

#include <string>

#include "seer/errors.hpp"
#include "seer/memory.hpp"

namespace seer {

[[noreturn]] void throw_event_budget(const StepWindow& window) {
  throw EventBudgetExceeded("event budget exceeded: more than " +
                            std::to_string(window.event_budget) +
                            " events in the step ending at t=" + std::to_string(window.t_end) +
                            "; raise event_budget or look for a runaway event cascade");
}

[[noreturn]] void throw_pending_limit(const StepWindow& window, std::uint64_t pending) {
  throw EventBudgetExceeded(
      "memory guard: " + std::to_string(pending) + " events pending in the step ending at t=" +
      std::to_string(window.t_end) + ", more than the limit of " +
      std::to_string(window.pending_limit) + " (about " +
      format_bytes(window.pending_limit * kBytesPerEvent) +
      ", half of the memory available when the env was made: MemAvailable, the cgroup limit or "
      "SEER_MEMORY_LIMIT); look for a runaway event cascade");
}

void SerialExecutor::initialize() {
  for (EntityId e = 0; e < dispatcher_->num_entities(); ++e) dispatcher_->init(e, *this);
}

void SerialExecutor::collect_pending(std::vector<Event>& out) const {
  queue_.for_each([&out](const Event& e) { out.push_back(e); });
}

void SerialExecutor::run_step(const StepWindow& window, StepStats& stats) {
  Dispatcher& d = *dispatcher_;
  // Actions first, at t_k, in agent order (rule 5).
  if (d.has_step_begin()) {
    for (EntityId e = 0; e < d.num_entities(); ++e) d.step_begin(e, window.t_begin, *this);
  }
  for (std::uint32_t a = 0; a < window.num_agents; ++a) {
    if (window.alive == nullptr || window.alive[a]) d.action(a, window.t_begin, window.actions[a], *this);
  }
  // Then every event of the window, one at a time, in key order.
  while (queue_.top_time() < window.t_end) {
    if (window.event_budget != 0 && stats.events >= window.event_budget) {
      throw_event_budget(window);
    }
    Event event = queue_.pop();  // not const: the handler may use its payload (Model::on_event)
    d.event(event, *this);
    if (queue_.size() > window.pending_limit) throw_pending_limit(window, queue_.size());
    ++stats.events;
    if (event.source != event.target) ++stats.cross_events;
  }
  stats.rounds = 1;
}

bool SerialExecutor::run_until_decision(const StepWindow& window, StepStats& stats) {
  Dispatcher& d = *dispatcher_;
  const DecisionBoard& board = d.decisions();
  if (d.has_step_begin()) {
    for (EntityId e = 0; e < d.num_entities(); ++e) d.step_begin(e, window.t_begin, *this);
  }
  stats.rounds = 1;
  if (board.waiting() != 0) return true;
  while (queue_.top_time() < window.t_end) {
    if (window.event_budget != 0 && stats.events >= window.event_budget) {
      throw_event_budget(window);
    }
    Event event = queue_.pop();
    d.event(event, *this);
    ++stats.events;
    if (event.source != event.target) ++stats.cross_events;
    if (board.waiting() != 0) return true;
  }
  return false;
}

}  // namespace seer
