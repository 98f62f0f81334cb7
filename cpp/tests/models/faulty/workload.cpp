// The faulty test model's declaration (see seer/workload.hpp).
#include <cstddef>

#include "faulty/faulty.hpp"

namespace seer {

WorkloadDecl faulty_workload() {
  WorkloadDecl w;
  w.name = "faulty";
  w.summary = "Test model that breaches the event-locality contract on purpose (mode).";
  w.params = {
      int_param("num_entities", 8, 1, 1 << 20, "entities"),
      capped(positive_param("lookahead", 0.25, 0.0, 1e9, "minimum cross-entity delay")),
      capped(positive_param("dt", 1.0, 0.0, 1e9, "step length")),
      int_param("mode", 0, 0, 7, "which breach to commit (0: none)"),
      int_param("culprit", 0, 0, (1 << 20) - 1, "entity that commits it (< num_entities)"),
      capped(real_param("fail_after", 2.0, 0.0, 1e12, "time from which it does")),
      int_param("num_agents", 0, 0, 1 << 20, "entities 0 .. num_agents-1 are agents"),
  };
  w.observation = {"(1,)", "float32", "[0, inf): events handled"};
  w.action = {"Discrete(2)", "int64", "ignored"};
  w.state = {"()", "float32", "none"};
  w.event_kinds = {"TOKEN", "TICK"};
  std::vector<RecordDecl>& r = w.records;
  r.push_back(checked_record("state", sizeof(FaultyState),
                             {SEER_FIELD(FaultyState, handled), SEER_FIELD(FaultyState, tokens_seen)},
                             r));
  r.push_back(checked_record("public", sizeof(FaultyPublic), {SEER_FIELD(FaultyPublic, handled)}, r));
  return w;
}

}  // namespace seer
