// The handler context: everything a handler may do, nothing more.
#pragma once

#include <cstdint>
#include <string>

#include "seer/event.hpp"
#include "seer/rng.hpp"

namespace seer {

struct ModelSpec;

// Where scheduled events go; each executor supplies its own.
class EventSink {
 public:
  virtual ~EventSink() = default;
  // Takes a fully formed, already checked event. Called from the handler's thread.
  virtual void emit(const Event& event) = 0;
};

// Where decision requests go (the runtime's board of waiting agents).
class DecisionSink {
 public:
  virtual ~DecisionSink() = default;
  // Agent `agent` waits for an action from `time`; false if it already does.
  virtual bool park(EntityId agent, double time) = 0;
};

// What a handler is running for (used to name it in errors).
inline constexpr EventKind kHandlingInit = 0xFFFFFFF0u;
inline constexpr EventKind kHandlingStepBegin = 0xFFFFFFF1u;
inline constexpr EventKind kHandlingAction = 0xFFFFFFF2u;

// Name of an event kind, or of the special handlers above.
std::string kind_name(const ModelSpec& spec, EventKind kind);

// Passed to every handler of entity `self()`. Cheap contract checks run on
// every schedule() call (rule 3 of the event-locality contract,
// docs/concepts.md).
class Context {
 public:
  Context(const ModelSpec& spec, EntityId self, double now, EventKind handling, EntityRng& rng,
          std::uint64_t& next_seq, EventSink& sink, DecisionSink* decisions = nullptr)
      : spec_(&spec),
        self_(self),
        now_(now),
        handling_(handling),
        rng_(&rng),
        next_seq_(&next_seq),
        sink_(&sink),
        decisions_(decisions) {}

  double now() const { return now_; }
  EntityId self() const { return self_; }
  EntityRng& rng() { return *rng_; }
  const ModelSpec& spec() const { return *spec_; }
  // The earliest time an event for another entity may have: now +
  // lookahead, or the next representable time after now where the clock no
  // longer resolves the lookahead (now + lookahead == now, a lookahead below
  // half an ulp of now: 1e-300, or 1e-9 at now = 1e8). Never breaks rule 3.
  double earliest_cross_time() const;

  // Asks for this agent's next action (event-driven decisions,
  // docs/decisions.md): the agent waits from now, its later events held,
  // until the action arrives; on_action then runs at this time, and the agent
  // goes on. Other entities run on meanwhile. Throws ContractViolation when
  // the env does not run event-driven decisions, self() is not an agent, or
  // this handler asked already.
  void request_decision();

  // Schedules `kind` for `target` at `time` with a payload record.
  // Throws ContractViolation if target is unknown, kind is not declared in
  // spec().event_kinds, time is not finite, or
  // time < now (self) / time < now + lookahead or time <= now (other
  // entities).
  template <class P>
  void schedule(EntityId target, double time, EventKind kind, const P& payload) {
    Event event;
    event.time = time;
    event.target = target;
    event.kind = kind;
    event.set_payload(payload);
    emit(event);
  }
  void schedule(EntityId target, double time, EventKind kind) {
    Event event;
    event.time = time;
    event.target = target;
    event.kind = kind;
    emit(event);
  }

 private:
  void emit(Event& event);  // checks, stamps source and seq, hands to the sink
  [[noreturn]] void violation(const Event& event, const std::string& rule) const;

  const ModelSpec* spec_;
  EntityId self_;
  double now_;
  EventKind handling_;
  EntityRng* rng_;
  std::uint64_t* next_seq_;
  EventSink* sink_;
  DecisionSink* decisions_;  // null: the env runs in lockstep
};

}  // namespace seer
