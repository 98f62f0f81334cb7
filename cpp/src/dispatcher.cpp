#include "dispatcher.hpp"

#include <cstring>
#include <exception>
#include <sstream>

#include "seer/errors.hpp"
#include "compiler.hpp"
#include "save_checksum.hpp"

namespace seer {

Dispatcher::Dispatcher(Model& model)
    : model_(&model),
      spec_(&model.spec()),
      entities_(model.spec().num_entities),
      has_step_begin_(model.has_step_begin()) {
  checked_counts_.events.assign(model.spec().event_kinds.size(), 0);
}

std::atomic<int>& Dispatcher::stops_in_progress() {
  static std::atomic<int> count{0};
  return count;
}

void Dispatcher::reseed(std::uint64_t seed) {
  seed_ = seed;
  for (EntityId e = 0; e < entities_.size(); ++e) {
    entities_[e].rng = EntityRng(seed, e);
    entities_[e].next_seq = 0;
  }
}

void Dispatcher::set_write_check(WriteCheck mode) {
  write_check_ = mode;  // the copy or hashes are kept: reused by the next checked step
  if (mode != WriteCheck::kDetect) return;
  if (model_->entity_state_size() <= kHashedStateMax) {
    state_copy_ = {};
    hash_states_for_write_check();
  } else {
    state_hash_ = {};
    copy_states_for_write_check();
  }
}

std::uint64_t Dispatcher::state_hash(EntityId e) const {
  return save_checksum(reinterpret_cast<const char*>(model_->entity_state(e)),
                       model_->entity_state_size());
}

void Dispatcher::hash_states_for_write_check() {
  state_hash_.resize(entities_.size());
  for (EntityId e = 0; e < entities_.size(); ++e) state_hash_[e] = state_hash(e);
}

template <class Fn>
void Dispatcher::run_handler(EntityId e, double now, EventKind handling, Fn&& fn) {
  if (SEER_UNLIKELY(stop_.load(std::memory_order_relaxed))) {
    std::ostringstream out;
    out.precision(17);
    out << "interrupted: the step stopped before entity " << e << " handled '"
        << kind_name(*spec_, handling) << "' at t=" << now << "; call reset()";
    throw Interrupted(out.str());
  }
  if (write_check_ != WriteCheck::kOff) {
    count_checked(handling);
    if (write_check_ == WriteCheck::kFull) copy_states_for_write_check();
    if (write_check_ == WriteCheck::kDetect) detect_foreign_write(e, now, handling);
  }
  try {
    fn();
  } catch (const ContractViolation&) {
    throw;
  } catch (const EventBudgetExceeded&) {
    throw;
  } catch (const Interrupted&) {
    throw;
  } catch (const std::exception& error) {
    std::ostringstream out;
    out.precision(17);
    out << "handler failed: entity " << e << " handling '" << kind_name(*spec_, handling)
        << "' at t=" << now << ": " << error.what();
    throw HandlerError(out.str(), e, kind_name(*spec_, handling), now);
  } catch (...) {
    std::ostringstream out;
    out.precision(17);
    out << "handler failed: entity " << e << " handling '" << kind_name(*spec_, handling)
        << "' at t=" << now << ": unknown exception";
    throw HandlerError(out.str(), e, kind_name(*spec_, handling), now);
  }
  if (write_check_ == WriteCheck::kFull) verify_states(e, now, handling);
  if (write_check_ == WriteCheck::kDetect) {
    const std::size_t size = model_->entity_state_size();
    if (size <= kHashedStateMax) {
      state_hash_[e] = state_hash(e);
    } else {
      std::memcpy(state_copy_.data() + e * size, model_->entity_state(e), size);
    }
  }
}

void Dispatcher::count_checked(EventKind handling) {
  switch (handling) {
    case kHandlingInit: ++checked_counts_.init; break;
    case kHandlingStepBegin: ++checked_counts_.step_begin; break;
    case kHandlingAction: ++checked_counts_.action; break;
    default:
      if (handling < checked_counts_.events.size()) ++checked_counts_.events[handling];
  }
}

void Dispatcher::init(EntityId e, EventSink& sink) {
  run_handler(e, 0.0, kHandlingInit, [&] {
    Context ctx(*spec_, e, 0.0, kHandlingInit, entities_[e].rng, entities_[e].next_seq, sink,
                board());
    model_->on_init(ctx);
  });
}

void Dispatcher::step_begin(EntityId e, double now, EventSink& sink) {
  if (!has_step_begin()) return;  // Model's no-op, or not the step's first window
  run_handler(e, now, kHandlingStepBegin, [&] {
    Context ctx(*spec_, e, now, kHandlingStepBegin, entities_[e].rng, entities_[e].next_seq,
                sink, board());
    model_->on_step_begin(ctx);
  });
}

void Dispatcher::action(EntityId e, double now, const ActionView& action, EventSink& sink) {
  run_handler(e, now, kHandlingAction, [&] {
    Context ctx(*spec_, e, now, kHandlingAction, entities_[e].rng, entities_[e].next_seq, sink,
                board());
    model_->on_action(ctx, action);
  });
}

void Dispatcher::event(const Event& event, EventSink& sink) {
  const EntityId e = event.target;
  if (SEER_UNLIKELY(decisions_on_) && board_.parked(e) && board_.holding()) {
    board_.hold(event);  // e waits for its action: run after it (decision_steps.cpp)
    return;
  }
  run_handler(e, event.time, event.kind, [&] {
    Context ctx(*spec_, e, event.time, event.kind, entities_[e].rng, entities_[e].next_seq, sink,
                board());
    model_->on_event(ctx, event);
  });
}

void Dispatcher::copy_states_for_write_check() {
  const std::size_t size = model_->entity_state_size();
  state_copy_.resize(size * entities_.size());
  for (EntityId e = 0; e < entities_.size(); ++e) {
    std::memcpy(state_copy_.data() + e * size, model_->entity_state(e), size);
  }
}

bool Dispatcher::state_changed(EntityId e) const {
  const std::size_t size = model_->entity_state_size();
  if (size <= kHashedStateMax) return state_hash_[e] != state_hash(e);
  return std::memcmp(state_copy_.data() + e * size, model_->entity_state(e), size) != 0;
}

void Dispatcher::detect_foreign_write(EntityId e, double now, EventKind handling) {
  if (state_changed(e)) {
    std::ostringstream out;
    out.precision(17);
    out << "contract violation: entity-local writes: the state of entity " << e
        << " changed outside its own handlers (found before it handled '"
        << kind_name(*spec_, handling) << "' at t=" << now << ")";
    throw ForeignWriteDetected(out.str(), e, kind_name(*spec_, handling), now, e, now);
  }
}

void Dispatcher::finish_write_detection(double t_end) {
  for (EntityId e = 0; e < entities_.size(); ++e) {
    if (state_changed(e)) {
      std::ostringstream out;
      out.precision(17);
      out << "contract violation: entity-local writes: the state of entity " << e
          << " changed outside its own handlers in the step ending at t=" << t_end;
      throw ForeignWriteDetected(out.str(), e, "step", t_end, e, t_end);
    }
  }
}

void Dispatcher::verify_states(EntityId e, double now, EventKind handling) {
  const std::size_t size = model_->entity_state_size();
  for (EntityId other = 0; other < entities_.size(); ++other) {
    if (other == e) continue;
    if (std::memcmp(state_copy_.data() + other * size, model_->entity_state(other), size) != 0) {
      std::ostringstream out;
      out.precision(17);
      out << "contract violation: entity-local writes: entity " << e << " handling '"
          << kind_name(*spec_, handling) << "' at t=" << now << " wrote the state of entity "
          << other;
      throw ContractViolation(out.str(), e, kind_name(*spec_, handling), now, other, now);
    }
  }
}

}  // namespace seer
