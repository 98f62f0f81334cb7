// The slots test models' declarations (see seer/workload.hpp).
#include <cstddef>

#include "slots/slots.hpp"

namespace seer {

WorkloadDecl slots_workload() {
  WorkloadDecl w;
  w.name = "slots";
  w.summary = "Agents take free slots; only free ones are valid actions (action masks).";
  w.params = {
      int_param("agents", 6, 1, 1 << 20, "agents (each an entity)"),
      int_param("slots", 3, 1, 16, "slots per agent (actions: 0 waits, 1 + s takes slot s)"),
      capped(positive_param("hold", 1.5, 0.0, 1e9, "mean time a taken slot stays taken")),
      capped(positive_param("lookahead", 0.5, 0.0, 1e9, "delay of a PING to the next agent")),
  };
  w.observation = {"(slots + 2,)", "float32", "slots taken (0/1), PINGs, neighbour's taken"};
  w.action = {"Discrete(slots + 1)", "int64", "0 waits, 1 + s takes free slot s"};
  w.state = {"(0,)", "float32", "none"};
  w.event_kinds = {"RELEASE", "PING", "ASK"};
  w.action_mask = true;
  std::vector<RecordDecl>& r = w.records;
  r.push_back(checked_record("state", sizeof(SlotsState),
                             {SEER_FIELD(SlotsState, taken), SEER_FIELD(SlotsState, pings),
                              SEER_FIELD(SlotsState, claims), SEER_FIELD(SlotsState, asked)},
                             r));
  r.push_back(checked_record("public", sizeof(SlotsPublic),
                             {SEER_FIELD(SlotsPublic, busy), SEER_FIELD(SlotsPublic, pad)}, r));
  r.push_back(checked_record("payload", sizeof(SlotsPayload),
                             {SEER_FIELD(SlotsPayload, slot), SEER_FIELD(SlotsPayload, pad)}, r));
  return w;
}

WorkloadDecl slots_asking_workload() {
  WorkloadDecl w = slots_workload();
  w.name = "slots_asking";
  w.summary = "slots whose agents ask for actions at their own ASK events (decisions).";
  w.decisions = true;
  return w;
}

}  // namespace seer
