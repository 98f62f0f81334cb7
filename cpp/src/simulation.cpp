#include "seer/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>
#include <cstring>
#include <stdexcept>

#include "seer/digest.hpp"
#include "seer/errors.hpp"

namespace seer {
namespace {

// Format 2: magic, a 64-bit Digest of everything after it, then the payload.
// The checksum refuses accidental corruption (bit flips, truncation) before
// any field is read; every field is validated too (a crafted blob).
constexpr char kSaveMagic[8] = {'S', 'E', 'E', 'R', 'S', 'A', 'V', '2'};
constexpr char kSaveMagicPrefix[7] = {'S', 'E', 'E', 'R', 'S', 'A', 'V'};
constexpr std::size_t kSaveHeader = sizeof(kSaveMagic) + sizeof(std::uint64_t);

std::uint64_t payload_checksum(const char* data, std::size_t size) {
  Digest d;
  d.add(data, size);
  return d.value();
}

[[noreturn]] void refuse(const std::string& why) {
  throw std::invalid_argument("saved state is corrupt or not from this model: " + why);
}

class Writer {
 public:
  template <class T>
  void value(const T& v) { bytes(&v, sizeof(T)); }
  void bytes(const void* p, std::size_t n) {
    if (n == 0) return;  // p may be null (empty outputs of a model without agents)
    out.append(static_cast<const char*>(p), n);
  }
  std::string out;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  template <class T>
  T value() {
    T v;
    bytes(&v, sizeof(T));
    return v;
  }
  void bytes(void* p, std::size_t n) {
    if (n == 0) return;  // memcpy to a null p is undefined even for 0 bytes (UBSan)
    if (n > in_.size() - pos_) throw std::invalid_argument("saved state is truncated");
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
  }
  bool done() const { return pos_ == in_.size(); }
  std::size_t remaining() const { return in_.size() - pos_; }

 private:
  const std::string& in_;
  std::size_t pos_ = 0;
};

template <class T>
void write_array(Writer& w, const T* data, std::size_t n) {
  w.value<std::uint64_t>(n);
  w.bytes(data, n * sizeof(T));
}

template <class T>
void write_vector(Writer& w, const std::vector<T>& v) {
  write_array(w, v.data(), v.size());
}

template <class T>
void read_array(Reader& r, T* data, std::size_t n) {
  if (r.value<std::uint64_t>() != n) {
    throw std::invalid_argument("saved state has a different shape");
  }
  r.bytes(data, n * sizeof(T));
}

// Moves every pending event (a checked step's serial stand-in and back).
void move_pending(Executor& from, Executor& to) {
  std::vector<Event> pending;
  from.collect_pending(pending);
  from.clear();
  for (const Event& e : pending) to.insert(e);
}

}  // namespace

Simulation::Simulation(std::unique_ptr<Model> model, const SimulationOptions& options)
    : model_(std::move(model)), options_(options), dispatcher_(*model_) {
  const ModelSpec& s = model_->spec();
  if (!(s.lookahead > 0.0)) {
    throw std::invalid_argument("model " + s.name + ": lookahead must be > 0, got " +
                                std::to_string(s.lookahead));
  }
  if (!(s.dt > 0.0)) {
    throw std::invalid_argument("model " + s.name + ": dt must be > 0, got " +
                                std::to_string(s.dt));
  }
  set_executor(options.executor, options.num_threads);
  action_views_.resize(s.num_agents);
  obs_.assign(static_cast<std::size_t>(s.num_agents) * s.obs_dim, 0.0f);
  rewards_.assign(s.num_agents, 0.0);
  terminated_.assign(s.num_agents, 0);
  truncated_.assign(s.num_agents, 0);
  infos_.assign(static_cast<std::size_t>(s.num_agents) * s.info_keys.size(), 0);
  out_ = Outputs{obs_.data(), rewards_.data(), terminated_.data(), truncated_.data(),
                 infos_.data()};
}

void Simulation::redirect_outputs(const Outputs& out) {
  const ModelSpec& s = spec();
  const std::size_t n = s.num_agents;
  std::copy_n(out_.observations, n * s.obs_dim, out.observations);
  std::copy_n(out_.rewards, n, out.rewards);
  std::copy_n(out_.terminations, n, out.terminations);
  std::copy_n(out_.truncations, n, out.truncations);
  std::copy_n(out_.infos, n * s.info_keys.size(), out.infos);
  out_ = out;
}

void Simulation::set_executor(const std::string& name, unsigned num_threads) {
  set_executor(make_executor(name, num_threads));
}

void Simulation::set_executor(std::unique_ptr<Executor> next) {
  next->bind(dispatcher_);
  if (executor_) {
    std::vector<Event> pending;
    executor_->collect_pending(pending);
    for (const Event& e : pending) next->insert(e);
  }
  executor_ = std::move(next);
  options_.executor = executor_->name();
  options_.num_threads = executor_->num_threads();
}

template <class Fn>
void Simulation::one_handler_at_a_time(WriteCheck mode, Fn&& fn) {
  // The write check compares states that other handlers may be writing: only
  // sound while no other handler runs.
  try {
    if (executor_->num_threads() == 1) {
      dispatcher_.set_write_check(mode);
      fn(*executor_);
    } else {
      if (!stand_in_) {
        stand_in_ = make_executor("serial", 1);
        stand_in_->bind(dispatcher_);
      }
      move_pending(*executor_, *stand_in_);
      dispatcher_.set_write_check(mode);
      try {
        fn(*stand_in_);
      } catch (...) {
        move_pending(*stand_in_, *executor_);  // pending_events() stays meaningful
        throw;
      }
      move_pending(*stand_in_, *executor_);
    }
  } catch (...) {
    dispatcher_.set_write_check(WriteCheck::kOff);
    throw;
  }
  dispatcher_.set_write_check(WriteCheck::kOff);
}

void Simulation::run_checked(const StepWindow& window, StepStats& stats) {
  stats.threads = 1;
  try {
    // Detection first: one state compared and copied per handler.
    one_handler_at_a_time(WriteCheck::kDetect, [&](Executor& executor) {
      executor.run_step(window, stats);
      dispatcher_.finish_write_detection(window.t_end);
    });
  } catch (const ForeignWriteDetected&) {
    // A foreign write happened in this step: rerun it from its start with
    // every other state compared after every handler, which names the writer
    // (the full check's cost, for this one step).
    restore_step_start();
    stats = StepStats{};
    stats.threads = 1;
    one_handler_at_a_time(WriteCheck::kFull,
                          [&](Executor& executor) { executor.run_step(window, stats); });
    throw;  // not found again (a model whose handlers are not deterministic)
  }
}

void Simulation::keep_step_start() {
  const ModelSpec& s = spec();
  const std::size_t state_size = model_->entity_state_size();
  const std::size_t public_size = model_->public_size();
  StepStart& k = step_start_;
  k.states.resize(s.num_entities * state_size);
  k.publics.resize(s.num_entities * public_size);
  k.runtimes.resize(s.num_entities);
  for (EntityId e = 0; e < s.num_entities; ++e) {
    std::memcpy(k.states.data() + e * state_size, model_->entity_state(e), state_size);
    std::memcpy(k.publics.data() + e * public_size, model_->public_state(e), public_size);
    k.runtimes[e] = dispatcher_.entity(e);
  }
  k.pending.clear();
  executor_->collect_pending(k.pending);
}

void Simulation::restore_step_start() {
  const ModelSpec& s = spec();
  const std::size_t state_size = model_->entity_state_size();
  const std::size_t public_size = model_->public_size();
  const StepStart& k = step_start_;
  for (EntityId e = 0; e < s.num_entities; ++e) {
    std::memcpy(model_->entity_state(e), k.states.data() + e * state_size, state_size);
    std::memcpy(model_->public_state(e), k.publics.data() + e * public_size, public_size);
    dispatcher_.entity(e) = k.runtimes[e];
  }
  model_->after_snapshot();  // as load() does: derived from the public states
  executor_->clear();
  for (const Event& e : k.pending) executor_->insert(e);
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
  executor_->clear();
  if (options_.check) {
    one_handler_at_a_time(WriteCheck::kFull, [](Executor& executor) { executor.initialize(); });
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
}

StepWindow Simulation::begin_step(const void* actions, const std::uint8_t* alive) {
  require_ready("step()");
  const ModelSpec& s = model_->spec();
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
  step_checked_ = options_.check || checked_steps_left_ > 0;
  if (checked_steps_left_ > 0) --checked_steps_left_;
  if (step_checked_) {
    snapshot_before_ = snapshot_digest();
    keep_step_start();  // to rerun the step if detection finds a foreign write
  }
  needs_reset_ = true;  // until the step completes
  dispatcher_.clear_stop();
  return window;
}

void Simulation::run_window(double t_end, const void* actions, const std::uint8_t* alive) {
  const auto start = std::chrono::steady_clock::now();
  const StepWindow window = make_window(t_end, actions, alive);
  StepStats stats;
  execute(window, stats);
  finish_step(window, stats, start);
}

std::uint64_t Simulation::snapshot_digest() const {
  Digest d;
  for (EntityId e = 0; e < spec().num_entities; ++e) {
    d.add(model_->public_state(e), model_->public_size());
  }
  return d.value();
}

void Simulation::finish_step(const StepWindow& window, const StepStats& stats,
                             std::chrono::steady_clock::time_point started) {
  if (step_checked_ && snapshot_digest() != snapshot_before_) {
    throw ContractViolation(
        "contract violation: the snapshot changed during the step ending at t=" +
            std::to_string(window.t_end) + " (handlers must only read it)",
        0, "step", now_);
  }
  if (step_checked_ && !options_.check && checked_steps_left_ == 0) {
    step_start_ = StepStart{};  // the last checked step: free its copies
    dispatcher_.free_write_check_copy();
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
  // In ranges of kSnapshotChunk entities: a call per range, not per entity.
  constexpr std::size_t kSnapshotChunk = 256;
  const std::size_t n = s.num_entities;
  executor_->parallel_for((n + kSnapshotChunk - 1) / kSnapshotChunk, [this, n](std::size_t c) {
    const std::size_t begin = c * kSnapshotChunk;
    model_->write_snapshots(static_cast<EntityId>(begin),
                            static_cast<EntityId>(std::min(n, begin + kSnapshotChunk)));
  });
  model_->after_snapshot();
  const std::size_t n_info = s.info_keys.size();
  executor_->parallel_for(s.num_agents, [&](std::size_t a) {
    const auto agent = static_cast<EntityId>(a);
    model_->observe(agent, out_.observations + a * s.obs_dim);
    out_.rewards[a] = model_->reward(agent);
    out_.terminations[a] = model_->terminated(agent) ? 1 : 0;
    out_.truncations[a] = model_->truncated(agent) ? 1 : 0;
    if (n_info != 0) model_->info(agent, out_.infos + a * n_info);
  });
}

std::vector<Event> Simulation::pending_events() const {
  std::vector<Event> pending;
  executor_->collect_pending(pending);
  std::sort(pending.begin(), pending.end(), key_less);
  return pending;
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
  for (const Event& event : pending_events()) d.add(&event, sizeof(Event));
  return d.value();
}

std::string Simulation::save() const {
  require_ready("save()");
  const ModelSpec& s = spec();
  Writer w;
  w.bytes(kSaveMagic, sizeof(kSaveMagic));
  w.value<std::uint64_t>(0);  // the checksum, filled in below
  w.value<std::uint64_t>(s.num_entities);
  w.value<std::uint64_t>(model_->entity_state_size());
  w.value<std::uint64_t>(model_->public_size());
  w.value(now_);
  w.value(steps_);
  w.value(events_total_);
  w.value(dispatcher_.seed());
  for (EntityId e = 0; e < s.num_entities; ++e) {
    w.bytes(model_->entity_state(e), model_->entity_state_size());
    w.bytes(model_->public_state(e), model_->public_size());
    const EntityRuntime& rt = dispatcher_.entity(e);
    w.value(rt.rng.blocks());
    w.value(rt.rng.used());
    w.value(rt.next_seq);
  }
  write_vector(w, pending_events());
  const std::size_t n = s.num_agents;
  write_array(w, out_.observations, n * s.obs_dim);
  write_array(w, out_.rewards, n);
  write_array(w, out_.terminations, n);
  write_array(w, out_.truncations, n);
  write_array(w, out_.infos, n * s.info_keys.size());
  const std::uint64_t sum =
      payload_checksum(w.out.data() + kSaveHeader, w.out.size() - kSaveHeader);
  std::memcpy(w.out.data() + sizeof(kSaveMagic), &sum, sizeof(sum));
  return w.out;
}

void Simulation::load(const std::string& blob) {
  const ModelSpec& s = spec();
  if (blob.size() < kSaveHeader) {
    throw std::invalid_argument("saved state is truncated (" + std::to_string(blob.size()) +
                                " bytes)");
  }
  if (std::memcmp(blob.data(), kSaveMagicPrefix,
                                               sizeof(kSaveMagicPrefix)) != 0) {
    throw std::invalid_argument("saved state: not a seer_env save");
  }
  if (blob[sizeof(kSaveMagicPrefix)] != kSaveMagic[sizeof(kSaveMagicPrefix)]) {
    throw std::invalid_argument(std::string("saved state has format version '") +
                                blob[sizeof(kSaveMagicPrefix)] + "'; this seer_env reads '" +
                                kSaveMagic[sizeof(kSaveMagicPrefix)] +
                                "' only: saves of older versions cannot be loaded");
  }
  std::uint64_t sum;
  std::memcpy(&sum, blob.data() + sizeof(kSaveMagic), sizeof(sum));
  if (sum != payload_checksum(blob.data() + kSaveHeader, blob.size() - kSaveHeader)) {
    refuse("the checksum does not match (the bytes were changed or truncated)");
  }
  Reader r(blob);
  std::string header(kSaveHeader, '\0');
  r.bytes(header.data(), kSaveHeader);
  if (r.value<std::uint64_t>() != s.num_entities ||
      r.value<std::uint64_t>() != model_->entity_state_size() ||
      r.value<std::uint64_t>() != model_->public_size()) {
    throw std::invalid_argument("saved state is for a different model or configuration");
  }
  // Read and check everything the runtime relies on before changing anything
  // it cannot rebuild: a refused blob leaves the clock, RNG and queues alone.
  const auto now = r.value<double>();
  if (!std::isfinite(now) || now < 0.0) refuse("clock " + std::to_string(now));
  const auto steps = r.value<std::uint64_t>();
  const auto events_total = r.value<std::uint64_t>();
  const auto seed = r.value<std::uint64_t>();
  const std::size_t state_size = model_->entity_state_size();
  const std::size_t public_size = model_->public_size();
  const std::size_t per_entity = state_size + public_size + sizeof(std::uint64_t) +
                                 sizeof(std::uint32_t) + sizeof(std::uint64_t);
  if (r.remaining() / per_entity < s.num_entities) refuse("truncated entity records");
  std::string states(s.num_entities * state_size, '\0');
  std::string publics(s.num_entities * public_size, '\0');
  struct Stream {
    std::uint64_t blocks;
    std::uint32_t used;
    std::uint64_t next_seq;
  };
  std::vector<Stream> streams(s.num_entities);
  for (EntityId e = 0; e < s.num_entities; ++e) {
    r.bytes(states.data() + e * state_size, state_size);
    r.bytes(publics.data() + e * public_size, public_size);
    Stream& st = streams[e];
    st.blocks = r.value<std::uint64_t>();
    st.used = r.value<std::uint32_t>();
    st.next_seq = r.value<std::uint64_t>();
    // A stream draws 4 words a block: used in [0, 4]; a fresh one (no block
    // yet) is exhausted (4).
    if (st.used > 4 || (st.blocks == 0 && st.used != 4)) {
      refuse("entity " + std::to_string(e) + " RNG counter (blocks " + std::to_string(st.blocks) +
             ", used " + std::to_string(st.used) + ")");
    }
  }
  const auto n_pending = r.value<std::uint64_t>();
  if (n_pending > r.remaining() / sizeof(Event)) {
    refuse(std::to_string(n_pending) + " pending events in " + std::to_string(r.remaining()) +
           " bytes");
  }
  std::vector<Event> pending(n_pending);
  for (std::uint64_t i = 0; i < n_pending; ++i) {
    Event& ev = pending[i];
    r.bytes(&ev, sizeof(Event));
    const std::string which = "pending event " + std::to_string(i) + " ";
    if (ev.target >= s.num_entities || ev.source >= s.num_entities) {
      refuse(which + "from entity " + std::to_string(ev.source) + " to entity " +
             std::to_string(ev.target) + " (" + std::to_string(s.num_entities) + " entities)");
    }
    if (!std::isfinite(ev.time) || ev.time < now) {
      refuse(which + "at t=" + std::to_string(ev.time) + ", before the saved clock t=" +
             std::to_string(now));
    }
    if (!s.event_kinds.empty() && ev.kind >= s.event_kinds.size()) {
      refuse(which + "of kind " + std::to_string(ev.kind));
    }
    if (ev.reserved != 0) refuse(which + "has nonzero reserved bytes");
    if (i > 0 && !key_less(pending[i - 1], ev)) refuse(which + "is out of order or repeated");
  }
  const std::size_t n = s.num_agents;
  const std::uint64_t output_bytes =
      5 * sizeof(std::uint64_t) + n * s.obs_dim * sizeof(*out_.observations) +
      n * sizeof(*out_.rewards) + n * sizeof(*out_.terminations) +
      n * sizeof(*out_.truncations) + n * s.info_keys.size() * sizeof(*out_.infos);
  if (r.remaining() != output_bytes) {
    refuse(std::to_string(r.remaining()) + " bytes of outputs, expected " +
           std::to_string(output_bytes));
  }
  // Valid: commit (the outputs' sizes were checked just above, so the reads
  // below cannot fail part-way).
  needs_reset_ = true;
  now_ = now;
  steps_ = steps;
  events_total_ = events_total;
  dispatcher_.reseed(seed);
  for (EntityId e = 0; e < s.num_entities; ++e) {
    std::memcpy(model_->entity_state(e), states.data() + e * state_size, state_size);
    std::memcpy(model_->public_state(e), publics.data() + e * public_size, public_size);
    EntityRuntime& rt = dispatcher_.entity(e);
    rt.rng.restore(seed, e, streams[e].blocks, streams[e].used);
    rt.next_seq = streams[e].next_seq;
  }
  executor_->clear();
  for (const Event& ev : pending) executor_->insert(ev);
  read_array(r, out_.observations, n * s.obs_dim);
  read_array(r, out_.rewards, n);
  read_array(r, out_.terminations, n);
  read_array(r, out_.truncations, n);
  read_array(r, out_.infos, n * s.info_keys.size());
  if (!r.done()) throw std::invalid_argument("saved state has trailing bytes");
  model_->after_snapshot();
  has_reset_ = true;
  needs_reset_ = false;
}

}  // namespace seer
