#include "seer/context.hpp"

#include <cmath>
#include <sstream>

#include "seer/errors.hpp"
#include "seer/model.hpp"

namespace seer {

std::string kind_name(const ModelSpec& spec, EventKind kind) {
  switch (kind) {
    case kHandlingInit:
      return "init";
    case kHandlingStepBegin:
      return "step_begin";
    case kHandlingAction:
      return "action";
    default:
      break;
  }
  if (kind < spec.event_kinds.size()) return spec.event_kinds[kind];
  return "kind#" + std::to_string(kind);
}

double Context::earliest_cross_time() const {
  const double t = now_ + spec_->lookahead;
  return t > now_ ? t : std::nextafter(now_, HUGE_VAL);
}

void Context::request_decision() {
  const char* refused = nullptr;
  if (decisions_ == nullptr) {
    refused = "request_decision() in an env that runs in lockstep (decisions=\"lockstep\")";
  } else if (self_ >= spec_->num_agents) {
    refused = "request_decision() by an entity that is not an agent";
  } else if (!decisions_->park(self_, now_)) {
    refused = "request_decision() while this agent's request is already waiting";
  }
  if (refused == nullptr) return;
  std::ostringstream out;
  out.precision(17);
  out << "contract violation: " << refused << ": entity " << self_ << " handling '"
      << kind_name(*spec_, handling_) << "' at t=" << now_;
  throw ContractViolation(out.str(), self_, kind_name(*spec_, handling_), now_, self_, now_);
}

void Context::emit(Event& event) {
  if (event.target >= spec_->num_entities) violation(event, "target is not an entity");
  // An undeclared kind has no name and no meaning to on_event (the specials
  // kHandling* are not event kinds either).
  if (event.kind >= spec_->event_kinds.size()) {
    violation(event, "event kind is not declared in event_kinds");
  }
  if (!std::isfinite(event.time)) violation(event, "event time is not finite");
  if (event.target == self_) {
    if (event.time < now_) violation(event, "self-event scheduled before now");
  } else if (event.time < now_ + spec_->lookahead || !(event.time > now_)) {
    // `> now` matters only when lookahead is below half an ulp of the clock
    // (now + L == now): cross-entity events must still move time forward, or
    // no conservative horizon could ever pass `now`.
    violation(event, "cross-entity event scheduled before now + lookahead");
  }
  event.source = self_;
  event.seq = (*next_seq_)++;
  sink_->emit(event);
}

void Context::violation(const Event& event, const std::string& rule) const {
  std::ostringstream out;
  out.precision(17);
  out << "contract violation: " << rule << ": entity " << self_ << " handling '"
      << kind_name(*spec_, handling_) << "' at t=" << now_ << " scheduled '"
      << kind_name(*spec_, event.kind) << "' for entity " << event.target << " at t="
      << event.time << " (lookahead " << spec_->lookahead << ", "
      << spec_->num_entities << " entities)";
  throw ContractViolation(out.str(), self_, kind_name(*spec_, handling_), now_, event.target,
                          event.time);
}

}  // namespace seer
