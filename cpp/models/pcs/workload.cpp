// The pcs_v0 and pcs_v1 declarations: parameters, spaces, keys and record
// layouts (see seer/workload.hpp). Adding a parameter: one row here, one read
// in pcs.cpp (or traffic.cpp).
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
                            "1e4 and >= handoff_delay / 1e4: an idle phone's moves are drawn in one "
                            "handler)")),
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
                              SEER_FIELD(PcsState, clock),
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

WorkloadDecl pcs_v1_workload() {
  WorkloadDecl w = pcs_workload();
  w.name = "pcs_v1";
  w.summary =
      "Guard channels under traffic that varies in time and space: a daily profile, a moving "
      "hot spot and rush-hour mobility (the learnable task).";
  // The learnable task's defaults (why: seer_env/envs/pcs_v1.py).
  for (ParamDecl& p : w.params) {
    if (p.name == "width" || p.name == "height") p.default_value = 8;
    if (p.name == "call_interval") p.default_value = 300.0;
    if (p.name == "handoff_weight") p.default_value = 10.0;
  }
  // Read by PcsTraffic (traffic.hpp) and the observation (pcs.cpp).
  w.params.push_back(capped(positive_param("day_minutes", 1440.0, 0.0, 1e12,
                                           "minutes of one traffic cycle (a day of 24 hours)")));
  w.params.push_back(real_param("daily_swing", 0.5, 0.0, 0.99,
                                "amplitude of the daily call-rate profile "
                                "1 - daily_swing * cos(2 pi t / day_minutes)"));
  w.params.push_back(real_param("hotspot_gain", 1.5, 0.0, 100.0,
                                "extra call rate at the moving hot spot's centre (0: none)"));
  w.params.push_back(capped(positive_param("hotspot_radius", 1.5, 0.0, 1e6,
                                           "the hot spot's Gaussian width in cells")));
  w.params.push_back(capped(real_param("rush_mobility", 200.0, 0.0, 1e6,
                                       "extra move rate at the 8:00 and 17:00 rush hours' "
                                       "peaks (0: none)")));
  w.params.push_back(capped(positive_param("count_cap", 8.0, 0.0, 1e12,
                                           "largest scaled count observed (bounds the Box)")));
  w.observation = {"(12,)", "float32", "bounded: see Observation"};
  w.state = {"(2 * width * height + 2,)", "float32", "[-1, 1]: see state()"};
  return w;
}

WorkloadDecl pcs_admission_workload() {
  WorkloadDecl w = pcs_v1_workload();
  w.name = "pcs_admission";
  w.summary =
      "Call admission control: a cell decides at each call and handoff arrival whether to "
      "admit it, under pcs_v1's varying traffic (event-driven decisions).";
  w.decisions = true;
  w.action = {"Discrete(2)", "int64", "0 refuses the arrival, 1 admits it"};
  w.event_kinds.push_back("ADMIT_CALL");
  w.event_kinds.push_back("ADMIT_HANDOFF");
  return w;
}

}  // namespace seer
