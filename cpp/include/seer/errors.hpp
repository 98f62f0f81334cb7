// The runtime's error types. The bindings map each to a Python exception.
#pragma once

#include <stdexcept>
#include <string>

#include "seer/event.hpp"

namespace seer {

// A model broke the event-locality contract (docs/concepts.md).
// -> seer_env.ContractViolation
class ContractViolation : public std::runtime_error {
 public:
  ContractViolation(const std::string& message, EntityId entity, std::string kind, double time,
                    long long target = -1, double event_time = 0.0)
      : std::runtime_error(message),
        entity(entity),
        kind(std::move(kind)),
        time(time),
        target(target),
        event_time(event_time) {}
  EntityId entity;     // entity whose handler broke the rule
  std::string kind;    // event kind being handled ("action", "init", ...)
  double time;         // simulated time of that handler
  long long target;    // target of the offending event, or -1
  double event_time;   // time of the offending event, if any
};

// A model handler threw. -> seer_env.HandlerError
class HandlerError : public std::runtime_error {
 public:
  HandlerError(const std::string& message, EntityId entity, std::string kind, double time)
      : std::runtime_error(message), entity(entity), kind(std::move(kind)), time(time) {}
  EntityId entity;
  std::string kind;
  double time;
};

// More events in one step than the configured budget. -> seer_env.EventBudgetExceeded
class EventBudgetExceeded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The call was interrupted (SIGINT in Python, or Simulation::request_interrupt)
// before the step finished; the env needs reset(). -> KeyboardInterrupt
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Wrong call order (step before reset, ...). -> RuntimeError
class CallOrderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace seer
