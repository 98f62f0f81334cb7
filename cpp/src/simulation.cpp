#include "seer/simulation.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "seer/digest.hpp"
#include "seer/errors.hpp"

namespace seer {
namespace {

constexpr char kSaveMagic[8] = {'S', 'E', 'E', 'R', 'S', 'A', 'V', '1'};

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
    if (pos_ + n > in_.size()) throw std::invalid_argument("saved state is truncated");
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
  }
  bool done() const { return pos_ == in_.size(); }

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
  // The foreign-write check needs one handler at a time.
  dispatcher_.set_write_check(options_.check && executor_->num_threads() == 1);
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
  dispatcher_.clear_stop();
  model_->reset_states();
  dispatcher_.reseed(seed);
  executor_->clear();
  executor_->initialize();
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
  executor_->run_step(window, stats);
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
  if (options_.check) snapshot_before_ = snapshot_digest();
  needs_reset_ = true;  // until the step completes
  dispatcher_.clear_stop();
  return window;
}

void Simulation::run_window(double t_end, const void* actions, const std::uint8_t* alive) {
  const auto start = std::chrono::steady_clock::now();
  const StepWindow window = make_window(t_end, actions, alive);
  StepStats stats;
  executor_->run_step(window, stats);
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
  if (options_.check && snapshot_digest() != snapshot_before_) {
    throw ContractViolation(
        "contract violation: the snapshot changed during the step ending at t=" +
            std::to_string(window.t_end) + " (handlers must only read it)",
        0, "step", now_);
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
  executor_->parallel_for(s.num_entities, [this](std::size_t e) {
    model_->write_snapshot(static_cast<EntityId>(e));
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
  return w.out;
}

void Simulation::load(const std::string& blob) {
  const ModelSpec& s = spec();
  Reader r(blob);
  char magic[sizeof(kSaveMagic)];
  r.bytes(magic, sizeof(magic));
  if (std::memcmp(magic, kSaveMagic, sizeof(magic)) != 0) {
    throw std::invalid_argument("saved state: not a seer_env save");
  }
  if (r.value<std::uint64_t>() != s.num_entities ||
      r.value<std::uint64_t>() != model_->entity_state_size() ||
      r.value<std::uint64_t>() != model_->public_size()) {
    throw std::invalid_argument("saved state is for a different model or configuration");
  }
  needs_reset_ = true;
  now_ = r.value<double>();
  steps_ = r.value<std::uint64_t>();
  events_total_ = r.value<std::uint64_t>();
  const auto seed = r.value<std::uint64_t>();
  dispatcher_.reseed(seed);
  for (EntityId e = 0; e < s.num_entities; ++e) {
    r.bytes(model_->entity_state(e), model_->entity_state_size());
    r.bytes(model_->public_state(e), model_->public_size());
    EntityRuntime& rt = dispatcher_.entity(e);
    const auto blocks = r.value<std::uint64_t>();
    const auto used = r.value<std::uint32_t>();
    rt.rng.restore(seed, e, blocks, used);
    rt.next_seq = r.value<std::uint64_t>();
  }
  const auto n_pending = r.value<std::uint64_t>();
  executor_->clear();
  for (std::uint64_t i = 0; i < n_pending; ++i) executor_->insert(r.value<Event>());
  const std::size_t n = s.num_agents;
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
