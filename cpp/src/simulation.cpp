// The step loop (reset, step, run_until, the vector env's begin_step /
// finish_step) and the boundary outputs. Checked steps are in
// checked_steps.cpp, save() and load() in save_load.cpp.
#include "simulation.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiled_model.hpp"
#include "digest.hpp"
#include "key_order.hpp"
#include "platform.hpp"
#include "seer/errors.hpp"
#include "seer/memory.hpp"

namespace seer {
namespace {

// Replaces `out` with a copy of `executor`'s pending events, reserved first:
// no doubling, so the copy never needs more than its own size.
void copy_pending(const Executor& executor, std::vector<Event>& out) {
  out.clear();
  out.reserve(executor.pending_count());
  executor.collect_pending(out);
}

}  // namespace

Simulation::Simulation(std::unique_ptr<Model> model, const SimulationOptions& options)
    : model_(std::move(model)), options_(options), dispatcher_(*model_) {
  // A compiled model's loops poll the stop flag (interrupts reach them).
  compiled_ = dynamic_cast<CompiledModel*>(model_.get());
  if (compiled_ != nullptr) compiled_->watch_stop(&dispatcher_.stop_flag());
  const ModelSpec& s = model_->spec();
  if (!(s.lookahead > 0.0)) {
    throw std::invalid_argument("model " + s.name + ": lookahead must be > 0, got " +
                                std::to_string(s.lookahead));
  }
  if (!(s.dt > 0.0)) {
    throw std::invalid_argument("model " + s.name + ": dt must be > 0, got " +
                                std::to_string(s.dt));
  }
  if (s.decisions != (options.decisions != DecisionMode::kLockstep)) {
    throw std::invalid_argument(
        s.decisions ? "decisions: model " + s.name +
                          " has its agents act when they ask (its declaration's decisions); "
                          "run it with decisions='windows' or 'one_at_a_time', not 'lockstep'"
                    : "decisions: model " + s.name +
                          " never asks for decisions (its declaration's decisions is false); "
                          "run it with decisions='lockstep'");
  }
  if (s.action_mask && !s.action.discrete) {
    throw std::invalid_argument("model " + s.name +
                                ": action_mask needs a Discrete action space (a mask says "
                                "which of its n actions are valid), got a Box");
  }
  set_executor(options.executor, options.num_threads);
  dispatcher_.enable_decisions(options.decisions != DecisionMode::kLockstep);
  pending_limit_ = options.pending_limit != 0 ? options.pending_limit : pending_event_limit(s);
  action_views_.resize(s.num_agents);
  obs_.assign(static_cast<std::size_t>(s.num_agents) * s.obs_dim, 0.0f);
  rewards_.assign(s.num_agents, 0.0);
  terminated_.assign(s.num_agents, 0);
  truncated_.assign(s.num_agents, 0);
  infos_.assign(static_cast<std::size_t>(s.num_agents) * s.info_keys.size(), 0);
  if (s.action_mask) {
    masks_.assign(static_cast<std::size_t>(s.num_agents) * static_cast<std::size_t>(s.action.n),
                  1);
  }
  out_ = Outputs{obs_.data(), rewards_.data(), terminated_.data(), truncated_.data(),
                 infos_.data(), s.action_mask ? masks_.data() : nullptr};
}

void Simulation::redirect_outputs(const Outputs& out) {
  const ModelSpec& s = spec();
  const std::size_t n = s.num_agents;
  std::copy_n(out_.observations, n * s.obs_dim, out.observations);
  std::copy_n(out_.rewards, n, out.rewards);
  std::copy_n(out_.terminations, n, out.terminations);
  std::copy_n(out_.truncations, n, out.truncations);
  std::copy_n(out_.infos, n * s.info_keys.size(), out.infos);
  Outputs next = out;
  if (!s.action_mask) {
    next.action_masks = nullptr;
  } else if (next.action_masks == nullptr) {
    next.action_masks = masks_.data();  // the caller has no mask rows: keep ours
  } else {
    std::copy_n(out_.action_masks, n * static_cast<std::size_t>(s.action.n), next.action_masks);
  }
  out_ = next;
}

void Simulation::set_executor(const std::string& name, unsigned num_threads) {
  set_executor(make_executor(name, num_threads));
}

void Simulation::set_executor(std::unique_ptr<Executor> next) {
  if (options_.decisions == DecisionMode::kOneAtATime && next->name() != "serial") {
    // Its windows stop mid-way at each request: only the serial queue can.
    throw std::invalid_argument("executor: the one-at-a-time decisions reference runs on "
                                "\"serial\", got '" + next->name() + "'");
  }
  next->bind(dispatcher_);
  if (executor_) {
    std::vector<Event> pending;
    copy_pending(*executor_, pending);
    for (const Event& e : pending) next->insert(e);
  }
  executor_ = std::move(next);
  options_.executor = executor_->name();
  options_.num_threads = executor_->num_threads();
}

std::string Simulation::thread_decision() const {
  // A checked step ran on the serial stand-in (or the env's one thread),
  // whatever the executor would have chosen.
  if (step_checked_ && steps_ > 0) {
    return "1 thread: a checked step (contract checks run one handler at a time)";
  }
  return executor_->thread_decision();
}

void Simulation::replace_torn_executor(std::unique_ptr<Executor> fresh) {
  fresh->bind(dispatcher_);
  (void)executor_.release();
  (void)stand_in_.release();
  executor_ = std::move(fresh);
  dispatcher_.set_write_check(WriteCheck::kOff);  // a checked step may have been torn
  needs_reset_ = true;
}

void Simulation::execute(const StepWindow& window, StepStats& stats) {
  if (step_checked_) {
    run_checked(window, stats);
    return;
  }
  stats.threads = executor_->num_threads();  // the parallel executor may report fewer
  executor_->run_step(window, stats);
}

void Simulation::require_ready(const char* what) const {
  if (!has_reset_) throw CallOrderError(std::string(what) + " called before reset()");
  if (needs_reset_) {
    throw CallOrderError(std::string(what) +
                         " called after a failed step; call reset() before stepping again");
  }
}

void Simulation::reset(std::uint64_t seed) {
  needs_reset_ = true;  // until this reset completes
  if (executor_torn_) {
    // Its queues, barrier and lists were mid-step at a fork: build a fresh
    // one (the old one's pool abandons the parent's threads).
    auto fresh = make_executor(options_.executor, options_.num_threads);
    fresh->bind(dispatcher_);
    executor_ = std::move(fresh);
    // A fork during a checked step: its stand-in is torn the same way, and the
    // write check was left on.
    stand_in_.reset();
    dispatcher_.set_write_check(WriteCheck::kOff);
    executor_torn_ = false;
  }
  dispatcher_.clear_stop();
  model_->reset_states();
  dispatcher_.reseed(seed);
  dispatcher_.decisions().clear();
  dispatcher_.skip_step_begin(false);
  requests_.clear();
  decision_ = DecisionClock{};
  executor_->clear();
  if (options_.check) {
    initialize_one_at_a_time();
  } else {
    executor_->initialize();
  }
  now_ = 0.0;
  steps_ = 0;
  events_total_ = 0;
  last_step_ = StepStats{};
  boundary();
  has_reset_ = true;
  needs_reset_ = false;
  ++generation_;
  step_log_.start(seed, generation_);  // checked steps may rerun from here
}

StepWindow Simulation::begin_step(const void* actions, const std::uint8_t* alive) {
  require_ready("step()");
  if (options_.decisions != DecisionMode::kLockstep) {
    throw CallOrderError(
        "step() called on an env with event-driven decisions: use advance() and answer()");
  }
  const ModelSpec& s = model_->spec();
  check_action_masks(actions, alive);  // before anything runs
  for (std::uint32_t a = 0; a < s.num_agents; ++a) {
    ActionView& view = action_views_[a];
    if (s.action.discrete) {
      view.discrete = static_cast<const std::int64_t*>(actions)[a];
    } else {
      view.box = static_cast<const float*>(actions) + static_cast<std::size_t>(a) * s.action.dim;
      view.dim = s.action.dim;
    }
  }
  return make_window(static_cast<double>(steps_ + 1) * s.dt, actions, alive);
}

void Simulation::step(const void* actions, const std::uint8_t* alive) {
  const auto start = std::chrono::steady_clock::now();
  const StepWindow window = begin_step(actions, alive);
  StepStats stats;
  execute(window, stats);
  finish_step(window, stats, start);
}

void Simulation::run_until(double t) {
  require_ready("run_until()");
  std::vector<std::uint8_t> nobody(model_->spec().num_agents, 0);
  while (now_ < t) run_window(static_cast<double>(steps_ + 1) * model_->spec().dt, nullptr,
                              nobody.data());
}

StepWindow Simulation::make_window(double t_end, const void* actions, const std::uint8_t* alive) {
  StepWindow window;
  window.t_begin = now_;
  window.t_end = t_end;
  window.actions = actions == nullptr ? nullptr : action_views_.data();
  window.alive = alive;
  window.num_agents = model_->spec().num_agents;
  window.event_budget = options_.event_budget;
  window.pending_limit = pending_limit_;
  if (begin_checked_step()) {
    note_step_start(window, actions);  // to rerun the step if detection finds a foreign write
  } else {
    step_log_.stop();  // a later checked step cannot rerun from the reset
  }
  needs_reset_ = true;  // until the step completes
  dispatcher_.clear_stop();
  return window;
}

bool Simulation::begin_checked_step() {
  step_checked_ = options_.check || checked_steps_left_ > 0;
  if (checked_steps_left_ > 0) --checked_steps_left_;
  if (step_checked_) snapshot_hashes(snapshot_before_);  // finish_step compares them
  return step_checked_;
}

void Simulation::run_window(double t_end, const void* actions, const std::uint8_t* alive) {
  const auto start = std::chrono::steady_clock::now();
  const StepWindow window = make_window(t_end, actions, alive);
  StepStats stats;
  execute(window, stats);
  finish_step(window, stats, start);
}

void Simulation::snapshot_hashes(std::vector<std::uint64_t>& out) const {
  out.resize(spec().num_entities);
  for (EntityId e = 0; e < spec().num_entities; ++e) {
    Digest d;
    d.add(model_->public_state(e), model_->public_size());
    out[e] = d.value();
  }
}

void Simulation::finish_step(const StepWindow& window, const StepStats& stats,
                             std::chrono::steady_clock::time_point started) {
  if (step_checked_) {
    // Per entity, so that the message names whose snapshot record changed (a
    // write through a view: a NumbaModel's record inside a tuple, say).
    std::vector<std::uint64_t> after;
    snapshot_hashes(after);
    for (EntityId e = 0; e < after.size(); ++e) {
      if (after[e] == snapshot_before_[e]) continue;
      throw ContractViolation(
          "contract violation: the snapshot record of entity " + std::to_string(e) +
              " changed during the step ending at t=" + std::to_string(window.t_end) +
              " (handlers must only read the snapshot; a write through a view of it, e.g. "
              "an array kept in a tuple, is a write)",
          e, "step", now_);
    }
  }
  if (step_checked_ && !options_.check && checked_steps_left_ == 0) {
    step_start_ = StepStart{};  // the last checked step: free its copies
    step_log_.stop();
    dispatcher_.free_write_check_copy();
    platform::return_free_memory();
  }
  now_ = window.t_end;
  ++steps_;
  events_total_ += stats.events;
  last_step_ = stats;
  boundary();
  needs_reset_ = false;
  last_step_seconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

void Simulation::boundary() {
  const ModelSpec& s = model_->spec();
  if (compiled_ != nullptr) compiled_->at_boundary(now_);  // for its hooks' errors
  // In ranges of kSnapshotChunk entities: a call per range, not per entity.
  constexpr std::size_t kSnapshotChunk = 256;
  const std::size_t n = s.num_entities;
  executor_->parallel_for((n + kSnapshotChunk - 1) / kSnapshotChunk, [this, n](std::size_t c) {
    const std::size_t begin = c * kSnapshotChunk;
    model_->write_snapshots(static_cast<EntityId>(begin),
                            static_cast<EntityId>(std::min(n, begin + kSnapshotChunk)));
  });
  model_->after_snapshot();
  // Outputs in ranges too: kOutputRanges of them, so that costly hooks still
  // spread over the threads, unless that makes ranges of over kSnapshotChunk agents.
  constexpr std::size_t kOutputRanges = 64;
  const std::size_t agents = s.num_agents;
  const std::size_t chunk =
      std::clamp<std::size_t>((agents + kOutputRanges - 1) / kOutputRanges, 1, kSnapshotChunk);
  executor_->parallel_for((agents + chunk - 1) / chunk, [this, agents, chunk](std::size_t c) {
    const std::size_t begin = c * chunk;
    const auto end = static_cast<EntityId>(std::min(agents, begin + chunk));
    model_->write_outputs(static_cast<EntityId>(begin), end, out_);
    if (out_.action_masks != nullptr) write_masks(static_cast<EntityId>(begin), end);
  });
}

void Simulation::write_masks(EntityId begin, EntityId end) {
  const auto n = static_cast<std::size_t>(spec().action.n);
  for (EntityId a = begin; a < end; ++a) {
    std::uint8_t* row = out_.action_masks + static_cast<std::size_t>(a) * n;
    std::fill_n(row, n, std::uint8_t{1});  // what a hook that writes nothing means
    model_->action_mask(a, row);
    for (std::size_t k = 0; k < n; ++k) row[k] = row[k] != 0 ? 1 : 0;
  }
}

void Simulation::check_action_masks(const void* actions, const std::uint8_t* alive) const {
  const ModelSpec& s = spec();
  if (out_.action_masks == nullptr || actions == nullptr) return;
  const auto* values = static_cast<const std::int64_t*>(actions);
  const auto n = static_cast<std::size_t>(s.action.n);
  const bool answers = options_.decisions != DecisionMode::kLockstep;
  const std::size_t rows = answers ? requests_.size() : s.num_agents;
  for (std::size_t i = 0; i < rows; ++i) {
    if (alive != nullptr && alive[i] == 0) continue;
    const EntityId agent = answers ? requests_[i].agent : static_cast<EntityId>(i);
    const std::uint8_t* mask = out_.action_masks + static_cast<std::size_t>(agent) * n;
    const std::int64_t action = values[i];
    if (action >= 0 && static_cast<std::size_t>(action) < n && mask[action] != 0) continue;
    std::string valid;
    for (std::size_t k = 0; k < n; ++k) {
      if (mask[k] != 0) valid += (valid.empty() ? "" : ", ") + std::to_string(k);
    }
    throw std::invalid_argument("action " + std::to_string(action) + " of " + s.agent_prefix +
                                "_" + std::to_string(agent) +
                                " is not valid now: its action mask allows [" + valid + "]");
  }
}

std::vector<const Event*> Simulation::pending_in_key_order(std::vector<Event>& storage) const {
  std::vector<const Event*> events;
  events.reserve(executor_->pending_count());
  if (!executor_->pending_in_place(events)) {
    copy_pending(*executor_, storage);
    for (const Event& e : storage) events.push_back(&e);
  }
  sort_by_key(events);
  return events;
}

std::vector<Event> Simulation::pending_events() const {
  std::vector<Event> storage;
  std::vector<Event> sorted;
  for (const Event* e : pending_in_key_order(storage)) sorted.push_back(*e);
  return sorted;
}

std::uint64_t Simulation::digest() const {
  Digest d;
  d.add_value(now_);
  d.add_value(steps_);
  for (EntityId e = 0; e < spec().num_entities; ++e) {
    d.add(model_->entity_state(e), model_->entity_state_size());
    d.add(model_->public_state(e), model_->public_size());
    const EntityRuntime& rt = dispatcher_.entity(e);
    d.add_value(rt.rng.blocks());
    d.add_value(rt.rng.used());
    d.add_value(rt.next_seq);
  }
  const DecisionBoard& board = dispatcher_.decisions();
  for (EntityId a = 0; a < board.agents(); ++a) {
    if (!board.parked(a)) continue;
    d.add_value(a);
    d.add_value(board.since(a));
    for (const Event& e : board.held(a)) d.add(&e, sizeof(Event));
  }
  std::vector<Event> storage;
  for (const Event* e : pending_in_key_order(storage)) d.add(e, sizeof(Event));
  return d.value();
}

}  // namespace seer
