// The model API: what a workload implements to run on the runtime.
//
// A model owns per-entity state and handlers. The runtime calls handlers with
// a Context that only permits what the event-locality contract permits:
// reading the clock, its own id and random stream, scheduling events, and
// reading the last boundary snapshot. Write a model by deriving from
// ModelBase (below), which stores states and snapshots for you.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "seer/context.hpp"
#include "seer/event.hpp"
#include "seer/memory.hpp"

namespace seer {

// The action of one agent for one step, as the Python layer passed it.
struct ActionView {
  std::int64_t discrete = 0;      // Discrete action spaces
  const float* box = nullptr;     // Box action spaces: `dim` values
  std::size_t dim = 0;
};

// Where a step's per-agent outputs go: rows indexed by agent id.
struct Outputs {
  float* observations = nullptr;      // [num_agents, obs_dim]
  double* rewards = nullptr;          // [num_agents]
  std::uint8_t* terminations = nullptr;
  std::uint8_t* truncations = nullptr;
  std::int64_t* infos = nullptr;      // [num_agents, info_keys]
  // [num_agents, action.n] 0/1 when spec().action_mask, else unused. The
  // runtime fills it (Model::action_mask), not write_outputs.
  std::uint8_t* action_masks = nullptr;
};

struct ActionSpec {
  bool discrete = true;
  std::int64_t n = 0;             // Discrete(n)
  std::size_t dim = 0;            // Box(low, high, (dim,), float32)
  float low = 0.0f, high = 0.0f;
};

// Static description of a built model: sizes, timing, spaces, output names.
struct ModelSpec {
  std::string name;
  std::uint32_t num_entities = 0;
  std::uint32_t num_agents = 0;    // agents are entities 0 .. num_agents-1
  std::string agent_prefix = "agent";
  double lookahead = 0.0;          // L: minimum delay of cross-entity events
  double dt = 1.0;                 // step length
  std::size_t obs_dim = 0;         // observations: float32 vectors
  std::vector<float> obs_low, obs_high;
  ActionSpec action;
  std::size_t state_dim = 0;       // env.state(): float32 vector
  float state_low = 0.0f, state_high = 0.0f;
  std::vector<std::string> info_keys;   // per-agent int64 counters
  std::vector<std::string> total_keys;  // env-wide int64 totals (Model::totals)
  std::vector<std::string> event_kinds; // names of event kinds, by kind id
  bool decisions = false;               // agents act when they ask (WorkloadDecl::decisions)
  // Agents' valid actions vary (WorkloadDecl::action_mask): the runtime calls
  // Model::action_mask and refuses an action the mask forbids. Discrete only.
  bool action_mask = false;
  MemoryEstimate memory;                // filled by the model before it allocates
  // Parameters whose declared default is computed (derived_default in
  // workload.hpp), as this instance resolved them: the env reads them here
  // instead of repeating the formula.
  std::vector<std::pair<std::string, double>> derived_params;
};

// The type-erased model interface the runtime drives. Every handler is
// entity-local: it may run concurrently with handlers of other entities.
class Model {
 public:
  virtual ~Model() = default;
  virtual const ModelSpec& spec() const = 0;

  // -- Episode start (serial). Put every entity in its initial state.
  virtual void reset_states() = 0;
  // Entity-local: initial events of entity ctx.self() at time 0.
  virtual void on_init(Context& ctx) = 0;

  // -- Inside a step [t_k, t_k + dt).
  // Entity-local, every entity, at t_k before any action (e.g. clear per-step counters).
  virtual void on_step_begin(Context& ctx) { (void)ctx; }
  // Entity-local, each live agent, at t_k after on_step_begin.
  virtual void on_action(Context& ctx, const ActionView& action) = 0;
  // Entity-local: handle one event addressed to ctx.self(). `event` is the
  // executor's own copy, taken off its queue and dropped after the call:
  // nothing reads its payload afterwards, so a model may use those bytes as
  // scratch (CompiledModel hands them to compiled code as its writable payload).
  virtual void on_event(Context& ctx, const Event& event) = 0;

  // -- Boundary (t_k + dt). No handler runs.
  // Copy entity e's public state into the snapshot (parallel over entities).
  virtual void write_snapshot(EntityId e) = 0;
  // write_snapshot for entities [begin, end): one virtual call per range
  // (per entity it cost ~20 instructions, as much as the copy many times over).
  virtual void write_snapshots(EntityId begin, EntityId end) {
    for (EntityId e = begin; e < end; ++e) write_snapshot(e);
  }
  // Build read-only structures derived from the whole snapshot (serial).
  virtual void after_snapshot() {}
  // Per-agent outputs, reading that agent's state and the snapshot
  // (parallel over agents).
  virtual void observe(EntityId agent, float* obs) const = 0;
  virtual double reward(EntityId agent) const = 0;
  virtual bool terminated(EntityId agent) const { (void)agent; return false; }
  virtual bool truncated(EntityId agent) const { (void)agent; return false; }
  virtual void info(EntityId agent, std::int64_t* out) const { (void)agent; (void)out; }
  // Which actions `agent` may take now: out[k] != 0 for each valid action k
  // of Discrete(spec().action.n). Called only when spec().action_mask: for
  // every agent at each boundary (like observe) and, with decisions, for each
  // agent when its request is collected. Reads only the agent's own state and
  // the snapshot, like observe (parallel over agents). Default: all valid.
  virtual void action_mask(EntityId agent, std::uint8_t* out) const {
    (void)agent;
    for (std::int64_t k = 0; k < spec().action.n; ++k) out[k] = 1;
  }
  // Every per-agent output of agents [begin, end) into their rows of `out`:
  // one virtual call per range (a model whose hooks cost a call each, e.g.
  // compiled handlers, answers a range with one call per hook).
  virtual void write_outputs(EntityId begin, EntityId end, const Outputs& out) const {
    const std::size_t obs_dim = spec().obs_dim, n_info = spec().info_keys.size();
    for (EntityId a = begin; a < end; ++a) {
      observe(a, out.observations + a * obs_dim);
      out.rewards[a] = reward(a);
      out.terminations[a] = terminated(a) ? 1 : 0;
      out.truncations[a] = truncated(a) ? 1 : 0;
      if (n_info != 0) info(a, out.infos + a * n_info);
    }
  }
  virtual void state(float* out) const { (void)out; }
  // Env-wide counters (one per spec().total_keys), summed in entity order.
  // Called between steps only.
  virtual void totals(std::int64_t* out) const { (void)out; }

  // -- Raw access for digests, save/load and contract checks.
  virtual std::size_t entity_state_size() const = 0;
  virtual unsigned char* entity_state(EntityId e) = 0;
  virtual std::size_t public_size() const = 0;
  virtual unsigned char* public_state(EntityId e) = 0;

  // Whether on_step_begin may do anything. False lets executors skip the
  // per-entity call at every step (at ~1 event per entity and step it cost
  // as much as handling an event). Default true: always safe.
  virtual bool has_step_begin() const { return true; }
};

// Stores per-entity State and snapshot Public arrays for a model `Derived`.
// Derived implements `static Public make_public(const State&)` and the
// handlers. State and Public must be trivially copyable with no implicit
// padding: they are hashed and saved byte for byte.
template <class Derived, class State, class Public>
class ModelBase : public Model {
 public:
  static_assert(std::is_trivially_copyable_v<State>, "State must be trivially copyable");
  static_assert(std::is_trivially_copyable_v<Public>, "Public must be trivially copyable");

  const ModelSpec& spec() const override { return spec_; }

  // Every entity back to its zeroed State: the right start of an episode
  // unless the model sets initial values (then override, and allocate first).
  void reset_states() override { allocate(spec_.num_entities); }

  void write_snapshot(EntityId e) override { snapshot_[e] = Derived::make_public(states_[e]); }
  void write_snapshots(EntityId begin, EntityId end) override {
    // A Derived that replaces write_snapshot gets it called, entity by entity.
    if constexpr (std::is_same_v<decltype(&Derived::write_snapshot),
                                 void (ModelBase::*)(EntityId)>) {
      for (EntityId e = begin; e < end; ++e) snapshot_[e] = Derived::make_public(states_[e]);
    } else {
      for (EntityId e = begin; e < end; ++e) static_cast<Derived*>(this)->write_snapshot(e);
    }
  }

  // Derived (or a class between it and us) declares on_step_begin, or
  // inherits Model's no-op: &Derived::on_step_begin then names Model's.
  bool has_step_begin() const override {
    return !std::is_same_v<decltype(&Derived::on_step_begin), void (Model::*)(Context&)>;
  }

  std::size_t entity_state_size() const override { return sizeof(State); }
  unsigned char* entity_state(EntityId e) override {
    return reinterpret_cast<unsigned char*>(&states_[e]);
  }
  std::size_t public_size() const override { return sizeof(Public); }
  unsigned char* public_state(EntityId e) override {
    return reinterpret_cast<unsigned char*>(&snapshot_[e]);
  }

 protected:
  // Sizes the arrays (value-initialized: zero bytes, padding included).
  void allocate(std::uint32_t num_entities) {
    states_.assign(num_entities, State{});
    snapshot_.assign(num_entities, Public{});
  }
  // The handler's own state: the only mutable state a handler may touch.
  State& self_state(const Context& ctx) { return states_[ctx.self()]; }
  // Any entity's state as of the last boundary (read-only).
  const Public& snapshot(EntityId e) const { return snapshot_[e]; }
  // Boundary outputs read the agent's own state through this.
  const State& state_of(EntityId e) const { return states_[e]; }

  ModelSpec spec_;
  std::vector<State> states_;
  std::vector<Public> snapshot_;
};

}  // namespace seer
