// Simulation's event-driven decisions: a step as windows of at most one
// lookahead, the agents that ask for an action answered a window at a time.
//
// Why a window's requests can be answered together, exactly: in a window
// [T, T + L), an event one entity schedules for another arrives at >= T + L
// (the contract: >= now + L, and now >= T), so nothing an entity does inside
// the window reaches another inside it. An agent that waits from t_d (its
// later events held, decision_board.hpp) and then takes its action and runs
// its held events on to T + L does, and sees, exactly what it would had it
// been answered at t_d with the rest of the world stopped: the one-at-a-time
// order (DecisionMode::kOneAtATime, which the tests hold the windows to).
// A handler reads other entities only through the snapshot, which changes
// only at step boundaries, and a step ends only once every request in it is
// answered.
#include <algorithm>
#include <cmath>
#include <queue>
#include <vector>

#include "seer/errors.hpp"
#include "serial_executor.hpp"
#include "simulation.hpp"

namespace seer {
namespace {

// Answers of fewer agents run on the caller (see answer()).
constexpr std::size_t kAnswersOnThePool = 64;

// Where the events of an answered agent's handlers go: its own ones due
// before the window's end run now, in key order; the rest become pending.
class AnswerSink final : public EventSink {
 public:
  AnswerSink(EntityId agent, double window_end, std::vector<Event>& later)
      : agent_(agent), window_end_(window_end), later_(&later) {}
  void emit(const Event& event) override {
    if (event.target == agent_ && event.time < window_end_) {
      due.push(event);
    } else {
      later_->push_back(event);
    }
  }
  std::priority_queue<Event, std::vector<Event>, EventAfter> due;

 private:
  EntityId agent_;
  double window_end_;
  std::vector<Event>* later_;
};

// Hands events straight to an executor (the one-at-a-time reference).
class InsertSink final : public EventSink {
 public:
  explicit InsertSink(Executor& executor) : executor_(&executor) {}
  void emit(const Event& event) override { executor_->insert(event); }

 private:
  Executor* executor_;
};

// The write check for work that runs one handler at a time outside an
// executor's step (a checked step's answers and reference windows):
// detection from now, finished at the end.
template <class Fn>
void detecting_writes(Dispatcher& d, bool checked, double t, Fn&& fn) {
  if (!checked) {
    fn();
    return;
  }
  struct CheckOff {
    Dispatcher& d;
    ~CheckOff() { d.set_write_check(WriteCheck::kOff); }
  } off{d};
  d.set_write_check(WriteCheck::kDetect);
  fn();
  d.finish_write_detection(t);
}

}  // namespace

void sort_requests(std::vector<DecisionRequest>& requests) {
  std::sort(requests.begin(), requests.end(),
            [](const DecisionRequest& x, const DecisionRequest& y) {
              return x.time != y.time ? x.time < y.time : x.agent < y.agent;
            });
}

void Simulation::require_decisions(const char* what) const {
  require_ready(what);
  if (options_.decisions == DecisionMode::kLockstep) {
    throw CallOrderError(std::string(what) +
                         " called on an env that runs in lockstep (decisions=\"lockstep\"): "
                         "use step()");
  }
}

Simulation::Progress Simulation::advance() {
  require_decisions("advance()");
  if (!requests_.empty()) {
    throw CallOrderError("advance() called while " + std::to_string(requests_.size()) +
                         " agents wait for actions: answer() them first");
  }
  needs_reset_ = true;  // until this call completes
  // Requests made by on_init, or by an answer's handlers outside a window.
  if (dispatcher_.decisions().waiting() != 0) {
    collect_requests();
    needs_reset_ = false;
    return Progress::kDecisions;
  }
  DecisionClock& c = decision_;
  for (;;) {
    if (!c.window_open) {
      const double step_end = static_cast<double>(steps_ + 1) * spec().dt;
      if (c.step_open && c.window_begin >= step_end) {
        finish_decision_step();
        needs_reset_ = false;
        return Progress::kBoundary;
      }
      if (!c.step_open) open_decision_step();
      c.window_end = safe_horizon(c.window_begin, spec().lookahead, step_end);
      c.window_open = true;
    }
    const bool waiting = run_decision_window();
    dispatcher_.skip_step_begin(true);  // on_step_begin ran in the step's first window
    if (waiting) {
      collect_requests();
      needs_reset_ = false;
      return Progress::kDecisions;
    }
    c.window_open = false;
    c.window_begin = c.window_end;
  }
}

void Simulation::open_decision_step() {
  DecisionClock& c = decision_;
  c.step_open = true;
  c.window_begin = now_;
  c.stats = StepStats{};
  c.started = std::chrono::steady_clock::now();
  dispatcher_.skip_step_begin(false);
  begin_checked_step();
}

StepWindow Simulation::decision_window() const {
  StepWindow window;
  window.t_begin = decision_.window_begin;
  window.t_end = decision_.window_end;
  window.num_agents = 0;  // actions arrive through answer(), not at the window's start
  window.event_budget = options_.event_budget;
  window.pending_limit = pending_limit_;
  window.step_end = static_cast<double>(steps_ + 1) * spec().dt;
  // The step's later windows continue it: between them only the answers
  // insert events (an executor may keep what it knew of the pending ones).
  window.continues_step = decision_.window_begin > now_;
  return window;
}

bool Simulation::run_decision_window() {
  const StepWindow window = decision_window();
  StepStats& stats = decision_.stats;
  dispatcher_.clear_stop();
  if (options_.decisions == DecisionMode::kOneAtATime) {
    auto& serial = static_cast<SerialExecutor&>(*executor_);
    bool waiting = false;
    detecting_writes(dispatcher_, step_checked_, window.t_end,
                     [&] { waiting = serial.run_until_decision(window, stats); });
    return waiting;
  }
  StepStats run;
  if (step_checked_) {
    run.threads = 1;
    step_one_at_a_time(WriteCheck::kDetect, window, run);
  } else {
    run.threads = executor_->num_threads();
    executor_->run_step(window, run);
  }
  stats.events += run.events;
  stats.cross_events += run.cross_events;
  stats.rounds += run.rounds;
  stats.threads = std::max(stats.threads, run.threads);
  stats.parked_waits += run.parked_waits;
  stats.ready += run.ready;
  stats.queue_reads += run.queue_reads;
  return dispatcher_.decisions().waiting() != 0;
}

void Simulation::collect_requests() {
  DecisionBoard& board = dispatcher_.decisions();
  requests_.clear();
  std::uint64_t held = 0;
  board.for_each_asked([&](EntityId a) {
    if (!board.parked(a)) return;
    requests_.push_back({a, board.since(a)});
    held += board.held(a).size();
  });
  // Every collected agent is answered before it can ask again.
  board.forget_asked();
  sort_requests(requests_);
  // A held event was handed over but not handled: it counts when it runs.
  decision_.stats.events -= std::min(held, decision_.stats.events);
  // Each asking agent's observation (and mask, spec().action_mask): rows of
  // their own, read-only model calls, so many of them go to the pool.
  const std::size_t obs_dim = spec().obs_dim;
  const auto observe = [&](std::size_t k) {
    const EntityId a = requests_[k].agent;
    model_->observe(a, out_.observations + static_cast<std::size_t>(a) * obs_dim);
    if (out_.action_masks != nullptr) write_masks(a, a + 1);
  };
  if (requests_.size() >= kAnswersOnThePool) {
    executor_->parallel_for(requests_.size(), observe);
  } else {
    for (std::size_t k = 0; k < requests_.size(); ++k) observe(k);
  }
}

void Simulation::answer(const void* actions) {
  require_decisions("answer()");
  if (requests_.empty()) {
    throw CallOrderError("answer() called with no agent waiting for an action: advance() first");
  }
  check_action_masks(actions, nullptr);  // spec().action_mask: before anything runs
  needs_reset_ = true;  // until this call completes
  const ModelSpec& s = spec();
  std::vector<ActionView> views(requests_.size());
  for (std::size_t k = 0; k < views.size(); ++k) {
    if (s.action.discrete) {
      views[k].discrete = static_cast<const std::int64_t*>(actions)[k];
    } else {
      views[k].box = static_cast<const float*>(actions) + k * s.action.dim;
      views[k].dim = s.action.dim;
    }
  }
  dispatcher_.clear_stop();
  DecisionBoard& board = dispatcher_.decisions();
  const double t = decision_.window_open ? decision_.window_end : now_;
  if (options_.decisions == DecisionMode::kOneAtATime) {
    // The reference: the agents' later events are still pending on the
    // serial queue, and run there in key order after these actions.
    InsertSink sink(*executor_);
    detecting_writes(dispatcher_, step_checked_, t, [&] {
      for (std::size_t k = 0; k < requests_.size(); ++k) {
        board.unpark(requests_[k].agent);
        dispatcher_.action(requests_[k].agent, requests_[k].time, views[k], sink);
      }
    });
  } else {
    std::vector<std::vector<Event>>& later = answer_later_;
    std::vector<StepStats>& stats = answer_stats_;
    if (later.size() < requests_.size()) later.resize(requests_.size());
    for (std::size_t k = 0; k < requests_.size(); ++k) later[k].clear();
    stats.assign(requests_.size(), StepStats{});
    const auto one = [&](std::size_t k) { answer_one(requests_[k], views[k], later[k], stats[k]); };
    if (step_checked_) {
      detecting_writes(dispatcher_, true, t, [&] {
        for (std::size_t k = 0; k < requests_.size(); ++k) one(k);
      });
    } else if (requests_.size() < kAnswersOnThePool) {
      // A few events each: waking the pool costs more than running them here.
      for (std::size_t k = 0; k < requests_.size(); ++k) one(k);
    } else {
      // Distinct agents, independent inside the window: on the pool.
      executor_->parallel_for(requests_.size(), one);
    }
    for (std::size_t k = 0; k < requests_.size(); ++k) {
      decision_.stats.events += stats[k].events;
      decision_.stats.cross_events += stats[k].cross_events;
    }
    executor_->insert_lists(later.data(), requests_.size());
  }
  requests_.clear();
  if (board.waiting() != 0) {
    collect_requests();  // asked again inside the window
  } else if (decision_.window_open && options_.decisions == DecisionMode::kWindows) {
    decision_.window_open = false;  // every agent ran to the window's end
    decision_.window_begin = decision_.window_end;
  }
  needs_reset_ = false;
}

void Simulation::answer_one(const DecisionRequest& r, const ActionView& action,
                            std::vector<Event>& later, StepStats& stats) {
  DecisionBoard& board = dispatcher_.decisions();
  std::vector<Event> held = board.take_held(r.agent);
  board.unpark(r.agent);
  const double end = decision_.window_open ? decision_.window_end : r.time;
  AnswerSink sink(r.agent, end, later);
  dispatcher_.action(r.agent, r.time, action, sink);
  // The held events (key order) merged with what the agent schedules for
  // itself inside the window; if it asks again, dispatcher_.event() holds
  // the rest once more.
  // The window's event budget bounds each agent's run too (a runaway cascade
  // of self-events would otherwise never end).
  const std::uint64_t budget = options_.event_budget;
  std::size_t next = 0;
  while (next < held.size() || !sink.due.empty()) {
    if (budget != 0 && stats.events >= budget) throw_event_budget(decision_window());
    Event event;
    if (!sink.due.empty() && (next == held.size() || key_less(sink.due.top(), held[next]))) {
      event = sink.due.top();
      sink.due.pop();
    } else {
      event = held[next++];
    }
    dispatcher_.event(event, sink);
    ++stats.events;
    if (event.source != event.target) ++stats.cross_events;
  }
}

void Simulation::finish_decision_step() {
  DecisionClock& c = decision_;
  StepWindow window = decision_window();
  window.t_begin = now_;
  window.t_end = c.window_begin;
  c.step_open = false;
  finish_step(window, c.stats, c.started);
}

}  // namespace seer
