// The pcs_v0 declaration: parameters, spaces, keys and record layouts (see
// seer/workload.hpp). Adding a parameter: one row here, one read in pcs.cpp.
#include <cstddef>

#include "pcs/pcs.hpp"

namespace seer {

WorkloadDecl pcs_workload() {
  WorkloadDecl w;
  w.name = "pcs";
  w.summary = "Wireless cell management: guard channels for handoffs (ROSS PCS as a MARL task).";
  w.params = {
      int_param("width", 32, 1, 4096, "cells along x (a torus)"),
      int_param("height", 32, 1, 4096, "cells along y (a torus)"),
      int_param("channels", 10, 1, PcsModel::kMaxChannels, "channels per cell"),
      int_param("phones_per_cell", 16, 1, 1 << 16,
                "phones per cell at reset (phones_per_cell * width * height <= 1e8)"),
      capped(positive_param("call_interval", 360.0, 0.0, 1e12,
                            "mean minutes between a phone's call attempts (exponential; >= "
                            "call_duration / 1e4: a call's busy lines are drawn in one handler)")),
      capped(positive_param("call_duration", 180.0, 0.0, 1e12,
                            "mean minutes of a call (exponential)")),
      capped(positive_param("move_interval", 4500.0, 0.0, 1e12,
                            "mean minutes between a phone's moves (exponential; >= call_interval / "
                            "1e4: an idle phone's moves are drawn in one handler)")),
      capped(positive_param("handoff_delay", 1.0, 0.0, 1e12,
                            "minutes a phone takes to arrive in another cell (the runtime's "
                            "lookahead: larger values give the parallel executor more work per "
                            "synchronization round)")),
      capped(positive_param("step_minutes", 60.0, 0.0, 1e12, "simulated minutes per step")),
      capped(real_param("handoff_weight", 5.0, 0.0, 1e12,
                        "cost of a dropped handoff relative to a blocked call")),
  };
  w.observation = {"(10,)", "float32", "[0, 1] and [0, inf): see Observation"};
  w.action = {"Discrete(channels + 1)", "int64", "the number of guard channels"};
  w.state = {"(2 * width * height,)", "float32", "[0, 1]"};
  w.info_keys = {"call_attempts",    "blocks", "busy_lines", "handoffs_in",
                 "dropped_handoffs", "events"};
  w.total_keys = {"call_attempts",    "blocks", "busy_lines", "handoffs",
                  "dropped_handoffs", "events"};
  w.event_kinds = {"NEXT_CALL", "CALL_END", "HANDOFF_OUT", "HANDOFF_IN"};

  std::vector<RecordDecl>& r = w.records;
  r.push_back(checked_record("counters", sizeof(PcsCounters),
                             {SEER_FIELD(PcsCounters, call_attempts),
                              SEER_FIELD(PcsCounters, blocks),
                              SEER_FIELD(PcsCounters, busy_lines),
                              SEER_FIELD(PcsCounters, handoffs_in),
                              SEER_FIELD(PcsCounters, dropped_handoffs),
                              SEER_FIELD(PcsCounters, events)},
                             r));
  r.push_back(checked_record("state", sizeof(PcsState),
                             {SEER_FIELD(PcsState, channel_mask), SEER_FIELD(PcsState, guard),
                              SEER_FIELD(PcsState, pad),
                              SEER_RECORD_FIELD(PcsState, step, "counters"),
                              SEER_RECORD_FIELD(PcsState, total, "counters")},
                             r));
  r.push_back(checked_record("public", sizeof(PcsPublic),
                             {SEER_FIELD(PcsPublic, busy), SEER_FIELD(PcsPublic, pad)}, r));
  r.push_back(checked_record("phone", sizeof(PcsPhone),
                             {SEER_FIELD(PcsPhone, next_call), SEER_FIELD(PcsPhone, call_end),
                              SEER_FIELD(PcsPhone, next_move), SEER_FIELD(PcsPhone, id),
                              SEER_FIELD(PcsPhone, channel)},
                             r));
  return w;
}

}  // namespace seer
