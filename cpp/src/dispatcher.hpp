// Runs model handlers for executors: builds the Context, keeps each entity's
// random stream and sequence counter, and turns handler failures into
// runtime errors that name the entity, the kind and the time.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "seer/context.hpp"
#include "compiler.hpp"
#include "decision_board.hpp"
#include "seer/errors.hpp"
#include "seer/event.hpp"
#include "seer/model.hpp"
#include "seer/rng.hpp"

namespace seer {

// How checked mode watches handlers for writes to other entities' states.
//   kDetect: before a handler, its entity's state must still be what its last
//     handler (or the step start) left; after it, that is recorded, and
//     finish_write_detection() checks every state once at the end. Finds any
//     foreign write (as ForeignWriteDetected, which does not name the
//     writer). States of up to kHashedStateMax bytes are recorded as a 64-bit
//     hash (a written state that hashes as before: a 2^-64 chance), larger
//     ones as a copy: a copy of every state is what the memory goes to with
//     many small states (PCS 256x256: 7 MB), and hashing a small state costs
//     about what comparing and copying it does, a large one several times
//     more (Aircraft's 2 KB states: checked steps 2.8x an unchecked one
//     hashed, 1.2x copied).
//   kFull: after every handler, every other entity's state is compared with a
//     copy taken before it: names the writer, for a copy of every state per
//     handler.
enum class WriteCheck : std::uint8_t { kOff, kDetect, kFull };

// kDetect found that `entity`'s state changed outside its own handlers; the
// Simulation reruns the step with kFull to name the writer (a ContractViolation,
// so that it reads well if it is raised as it is).
class ForeignWriteDetected : public ContractViolation {
 public:
  using ContractViolation::ContractViolation;
};

// Runtime-owned, entity-local bookkeeping. Touched only by the thread that
// currently runs a handler of that entity.
// next_seq first: with the stream's buffer it fills the first cache line, so
// a handler that draws and schedules touches one line (the second holds
// only a word the stream reads when it refills).
struct alignas(64) EntityRuntime {
  std::uint64_t next_seq = 0;  // seq of the next event this entity schedules
  EntityRng rng;
};

class Dispatcher {
 public:
  explicit Dispatcher(Model& model);
  ~Dispatcher() { clear_stop(); }  // leaves stops_in_progress() as it found it
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  Model& model() { return *model_; }
  const ModelSpec& spec() const { return *spec_; }
  std::uint32_t num_entities() const { return spec_->num_entities; }
  EntityRuntime& entity(EntityId e) { return entities_[e]; }
  // False when the model's on_step_begin is Model's no-op: step_begin()
  // returns at once, and executors may skip calling it.
  bool has_step_begin() const { return has_step_begin_ && !skip_step_begin_; }
  // Event-driven decisions run a step as several windows: on_step_begin
  // belongs to the first only (the later ones set this).
  void skip_step_begin(bool skip) { skip_step_begin_ = skip; }
  const EntityRuntime& entity(EntityId e) const { return entities_[e]; }

  // New episode: entity e's stream becomes Philox key (seed, e), seq 0.
  void reseed(std::uint64_t seed);
  std::uint64_t seed() const { return seed_; }

  // Checked mode (see WriteCheck). Only while one handler runs at a time
  // (the Simulation runs checked steps so). kDetect copies every state now.
  void set_write_check(WriteCheck mode);
  WriteCheck write_check() const { return write_check_; }
  // kDetect, at the end of a step: ForeignWriteDetected if any state differs
  // from what its entity's last handler left.
  void finish_write_detection(double t_end);
  // Frees the states' copy and hashes (no checked step follows).
  void free_write_check_copy() {
    state_copy_ = {};
    state_hash_ = {};
  }

  // Handlers run while a check ran them one at a time (write_check() not
  // kOff), since this dispatcher was made: what a contract check exercised.
  // Unchecked handlers are not counted (the hot path pays nothing).
  struct CheckedCounts {
    std::uint64_t init = 0, step_begin = 0, action = 0;
    std::vector<std::uint64_t> events;  // per declared event kind
  };
  const CheckedCounts& checked_counts() const { return checked_counts_; }

  // Interrupts: after request_stop(), every handler call throws Interrupted
  // before running, so a step in progress stops on every thread within one
  // handler. Thread-safe and async-signal-safe (one lock-free store);
  // clear_stop() before the next step. The poll costs one relaxed load per
  // handler of a flag that stays in cache.
  //
  // stops_in_progress() counts the dispatchers of the process whose stop is
  // requested: compiled handlers' loops read it first (handler_abi.h), and
  // their own dispatcher's flag only while it is not zero.
  void request_stop() {
    if (!stop_.exchange(true, std::memory_order_relaxed)) {
      stops_in_progress().fetch_add(1, std::memory_order_relaxed);
    }
  }
  void clear_stop() {
    if (stop_.load(std::memory_order_relaxed) && stop_.exchange(false, std::memory_order_relaxed)) {
      stops_in_progress().fetch_sub(1, std::memory_order_relaxed);
    }
  }
  bool stop_requested() const { return stop_.load(std::memory_order_relaxed); }
  const std::atomic<bool>& stop_flag() const { return stop_; }
  static std::atomic<int>& stops_in_progress();

  // Starts loading e's runtime record and state (a hint; changes nothing).
  SEER_PREFETCH_HELPER void prefetch(EntityId e) const {
    SEER_PREFETCH(&entities_[e]);
    SEER_PREFETCH(model_->entity_state(e));
  }

  // Event-driven decisions (decision_board.hpp): handlers may then ask for
  // an action, and event() holds the events of an agent that waits for one.
  void enable_decisions(bool on) {
    decisions_on_ = on;
    board_.resize(on ? spec_->num_agents : 0);
  }
  bool decisions_enabled() const { return decisions_on_; }
  DecisionBoard& decisions() { return board_; }
  const DecisionBoard& decisions() const { return board_; }

  // Thread-safe for distinct entities (entity-local by the contract).
  void init(EntityId e, EventSink& sink);
  void step_begin(EntityId e, double now, EventSink& sink);
  void action(EntityId e, double now, const ActionView& action, EventSink& sink);
  void event(const Event& event, EventSink& sink);

 private:
  // What a handler's Context asks for decisions through (null: lockstep).
  DecisionBoard* board() { return decisions_on_ ? &board_ : nullptr; }
  template <class Fn>
  void run_handler(EntityId e, double now, EventKind handling, Fn&& fn);
  // Checked mode: copies every entity's state bytes (kFull, before each
  // handler), or hashes them (kDetect, at the step start). (Not the model's
  // boundary snapshot.)
  void copy_states_for_write_check();
  void hash_states_for_write_check();
  std::uint64_t state_hash(EntityId e) const;
  // kDetect: whether e's state differs from what was recorded.
  bool state_changed(EntityId e) const;
  static constexpr std::size_t kHashedStateMax = 256;
  void count_checked(EventKind handling);
  // kFull, after e's handler: every other state against the copy.
  void verify_states(EntityId e, double now, EventKind handling);
  // kDetect, before e's handler: e's state against the copy.
  void detect_foreign_write(EntityId e, double now, EventKind handling);

  Model* model_;
  const ModelSpec* spec_;
  std::vector<EntityRuntime> entities_;
  std::uint64_t seed_ = 0;
  WriteCheck write_check_ = WriteCheck::kOff;
  bool has_step_begin_ = true;
  bool skip_step_begin_ = false;
  bool decisions_on_ = false;
  DecisionBoard board_;
  std::vector<unsigned char> state_copy_;  // kFull: the states it compares with
  std::vector<std::uint64_t> state_hash_;  // kDetect: each state's hash as last left
  CheckedCounts checked_counts_;
  // relaxed is enough: the flag carries no data, and a store becomes visible
  // to the polling threads within nanoseconds.
  std::atomic<bool> stop_{false};
  static_assert(std::atomic<bool>::is_always_lock_free, "request_stop() must be signal-safe");
  static_assert(std::atomic<int>::is_always_lock_free, "request_stop() must be signal-safe");
};

}  // namespace seer
