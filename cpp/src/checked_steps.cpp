// Simulation's checked steps: a step (or a reset's on_init) one handler at a
// time under the write check, and the rerun that names a writer.
//
// Memory is the point of most of this file. A checked step used to keep a
// copy of every pending event and state at its start (to rerun it), and a
// multi-threaded executor moved every pending event to a serial stand-in
// and back: at PCS 256x256 (1M pending events) the default two checked steps
// raised the env's peak from 255 to 373 MB (serial) and 300 to 416 MB
// (parallel-2). Now:
//   * the step runs where the events are: on the executor itself when it
//     can run one handler at a time (Executor::run_step_one_at_a_time: one
//     thread, or the parallel executor's rounds on the caller alone); only
//     the comparison executors still use the stand-in;
//   * nothing is copied for a rerun while the step log can rebuild the
//     step's start from the reset (step_log.hpp: the default first steps);
//     otherwise only what the rerun reads is kept: the states, streams and
//     the pending events the step handles (time < t_end), which a serial
//     stand-in then runs alone.
#include <cstring>
#include <exception>
#include <vector>

#include "platform.hpp"
#include "seer/errors.hpp"
#include "simulation.hpp"

namespace seer {
namespace {

// Moves every pending event from one executor to another, through one copy
// (a checked step's serial stand-in for a comparison executor, and back).
// `from` releases its storage first: the copy and one layout, never two.
void move_pending(Executor& from, Executor& to) {
  std::vector<Event> pending;
  pending.reserve(from.pending_count());
  from.collect_pending(pending);
  from.clear();
  from.release_storage();
  for (const Event& e : pending) to.insert(e);
}

// The Philox streams' and sequence counters' record, kept for a rerun.
std::vector<EntityRuntime> copy_runtimes(const Dispatcher& d) {
  std::vector<EntityRuntime> out(d.num_entities());
  for (EntityId e = 0; e < d.num_entities(); ++e) out[e] = d.entity(e);
  return out;
}

}  // namespace

void Simulation::step_one_at_a_time(WriteCheck mode, const StepWindow& window,
                                    StepStats& stats) {
  // The write check compares states that other handlers may be writing: only
  // sound while no other handler runs.
  struct CheckOff {
    Dispatcher& d;
    ~CheckOff() { d.set_write_check(WriteCheck::kOff); }
  } off{dispatcher_};
  dispatcher_.set_write_check(mode);
  const auto finish = [&] {
    if (mode == WriteCheck::kDetect) dispatcher_.finish_write_detection(window.t_end);
  };
  if (executor_->run_step_one_at_a_time(window, stats)) {
    finish();
    return;
  }
  if (!stand_in_) {
    stand_in_ = make_executor("serial", 1);
    stand_in_->bind(dispatcher_);
  }
  move_pending(*executor_, *stand_in_);
  // Back to the executor; the stand-in is dropped before the executor's
  // layout is rebuilt (it is made again for the next checked step).
  const auto take_back = [this] {
    std::vector<Event> pending;
    pending.reserve(stand_in_->pending_count());
    stand_in_->collect_pending(pending);
    stand_in_.reset();
    platform::return_free_memory();
    for (const Event& e : pending) executor_->insert(e);
  };
  try {
    stand_in_->run_step(window, stats);
    finish();
  } catch (...) {
    take_back();  // pending_events() stays meaningful
    throw;
  }
  take_back();
}

void Simulation::initialize_one_at_a_time() {
  struct CheckOff {
    Dispatcher& d;
    ~CheckOff() { d.set_write_check(WriteCheck::kOff); }
  } off{dispatcher_};
  dispatcher_.set_write_check(WriteCheck::kFull);
  if (executor_->initialize_one_at_a_time()) return;
  if (!stand_in_) {
    stand_in_ = make_executor("serial", 1);
    stand_in_->bind(dispatcher_);
  }
  stand_in_->initialize();  // the executor was cleared: nothing to move there
  move_pending(*stand_in_, *executor_);
  stand_in_.reset();
}

void Simulation::run_checked(const StepWindow& window, StepStats& stats) {
  stats.threads = 1;
  try {
    // Detection first: one state compared and copied per handler.
    step_one_at_a_time(WriteCheck::kDetect, window, stats);
  } catch (const ForeignWriteDetected&) {
    // A foreign write happened in this step: rerun it from its start with
    // every other state compared after every handler, which names the writer
    // (the full check's cost, for this one step).
    const StepWindow start = rewind_to_step_start(window);
    stats = StepStats{};
    stats.threads = 1;
    rerun(start, stats);
    throw;  // not found again (a model whose handlers are not deterministic)
  }
}

void Simulation::note_step_start(const StepWindow& window, const void* actions) {
  const ModelSpec& s = spec();
  const std::size_t action_bytes =
      static_cast<std::size_t>(s.num_agents) *
      (s.action.discrete ? sizeof(std::int64_t) : s.action.dim * sizeof(float));
  if (step_log_.record(generation_, steps_, window, actions, action_bytes, window.alive)) {
    step_start_ = StepStart{};  // the log rebuilds the start: nothing to keep
    return;
  }
  keep_step_start(window.t_end);
}

void Simulation::keep_step_start(double t_end) {
  const ModelSpec& s = spec();
  const std::size_t state_size = model_->entity_state_size();
  const std::size_t public_size = model_->public_size();
  StepStart& k = step_start_;
  k.states.resize(s.num_entities * state_size);
  k.publics.resize(s.num_entities * public_size);
  for (EntityId e = 0; e < s.num_entities; ++e) {
    std::memcpy(k.states.data() + e * state_size, model_->entity_state(e), state_size);
    std::memcpy(k.publics.data() + e * public_size, model_->public_state(e), public_size);
  }
  k.runtimes = copy_runtimes(dispatcher_);
  // Only the events the step handles: those due before its end (what it
  // schedules it makes again when rerun). Read in place where the executor
  // holds them; a copy of every pending event otherwise.
  k.due.clear();
  std::vector<const Event*> in_place;
  std::vector<Event> copy;
  if (executor_->pending_in_place(in_place)) {
    for (const Event* e : in_place) {
      if (e->time < t_end) k.due.push_back(*e);
    }
  } else {
    executor_->collect_pending(copy);
    for (const Event& e : copy) {
      if (e.time < t_end) k.due.push_back(e);
    }
  }
  k.kept = true;
}

StepWindow Simulation::rewind_to_step_start(const StepWindow& window) {
  const ModelSpec& s = spec();
  if (step_start_.kept) {
    const std::size_t state_size = model_->entity_state_size();
    const std::size_t public_size = model_->public_size();
    const StepStart& k = step_start_;
    for (EntityId e = 0; e < s.num_entities; ++e) {
      std::memcpy(model_->entity_state(e), k.states.data() + e * state_size, state_size);
      std::memcpy(model_->public_state(e), k.publics.data() + e * public_size, public_size);
      dispatcher_.entity(e) = k.runtimes[e];
    }
    model_->after_snapshot();  // as load() does: derived from the public states
    return window;  // its actions are still in action_views_
  }
  // Replay from the reset: the recorded steps before this one, unchecked
  // (each passed the check) and one handler at a time where the executor can
  // (not timed by the parallel executor's adaptive pool).
  const std::vector<StepLog::Step>& steps = step_log_.steps();
  const auto window_of = [&](const StepLog::Step& step) {
    StepWindow w = step.window;
    w.t_begin = now_;
    if (step.has_actions) {
      for (std::uint32_t a = 0; a < s.num_agents; ++a) {
        ActionView& view = action_views_[a];
        if (s.action.discrete) {
          std::memcpy(&view.discrete, step.actions.data() + a * sizeof(std::int64_t),
                      sizeof(std::int64_t));
        } else {
          view.box = reinterpret_cast<const float*>(step.actions.data()) +
                     static_cast<std::size_t>(a) * s.action.dim;
          view.dim = s.action.dim;
        }
      }
      w.actions = action_views_.data();
    }
    w.alive = step.has_alive ? step.alive.data() : nullptr;
    return w;
  };
  const std::uint64_t events_total = events_total_;
  const StepStats last_step = last_step_;
  model_->reset_states();
  dispatcher_.reseed(step_log_.seed());
  executor_->clear();
  executor_->initialize();
  now_ = 0.0;
  steps_ = 0;
  boundary();
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
    const StepWindow w = window_of(steps[i]);
    StepStats stats;
    if (!executor_->run_step_one_at_a_time(w, stats)) executor_->run_step(w, stats);
    now_ = w.t_end;
    ++steps_;
    boundary();
  }
  events_total_ = events_total;  // as they were at the step's start
  last_step_ = last_step;
  return window_of(steps.back());
}

void Simulation::rerun(const StepWindow& window, StepStats& stats) {
  if (!step_start_.kept) {
    step_one_at_a_time(WriteCheck::kFull, window, stats);
    return;
  }
  // The kept events alone, on a serial stand-in of their own: the step
  // handles nothing else. The executor keeps what detection left pending.
  std::unique_ptr<Executor> rerun = make_executor("serial", 1);
  rerun->bind(dispatcher_);
  for (const Event& e : step_start_.due) rerun->insert(e);
  struct CheckOff {
    Dispatcher& d;
    ~CheckOff() { d.set_write_check(WriteCheck::kOff); }
  } off{dispatcher_};
  dispatcher_.set_write_check(WriteCheck::kFull);
  rerun->run_step(window, stats);
}

}  // namespace seer
