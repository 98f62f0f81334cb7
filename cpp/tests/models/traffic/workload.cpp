// The traffic_grid test model's declaration (see seer/workload.hpp); the
// NumbaModel twin (tests/support/traffic_grid_numba.py) declares the same.
#include <cstddef>

#include "traffic/traffic_grid.hpp"

namespace seer {

WorkloadDecl traffic_grid_workload() {
  WorkloadDecl w;
  w.name = "traffic_grid";
  w.summary = "Signalised intersections on a torus passing cars (a NumbaModel speed model).";
  w.params = {
      int_param("width", 8, 1, 4096, "intersections along x (a torus)"),
      int_param("height", 8, 1, 4096, "intersections along y (a torus)"),
      int_param("cars_per_approach", 4, 0, 1 << 16, "cars queued at each approach at reset"),
      capped(positive_param("serve_interval", 0.5, 0.0, 1e9,
                            "time between two services of an approach")),
      capped(positive_param("travel_time", 1.0, 0.0, 1e9,
                            "time a car takes to the next intersection (the lookahead)")),
      capped(positive_param("step_time", 5.0, 0.0, 1e9, "simulated time per step")),
  };
  w.observation = {"(9,)", "float32", "[0, inf): queues, phase, neighbours' queues"};
  w.action = {"Discrete(2)", "int64", "0: north-south green, 1: east-west green"};
  w.state = {"(width * height,)", "float32", "[0, inf): cars queued per intersection"};
  w.info_keys = {"served", "arrived"};
  w.total_keys = {"served", "arrived"};
  w.event_kinds = {"SERVE", "ARRIVE"};
  std::vector<RecordDecl>& r = w.records;
  r.push_back(checked_record(
      "state", sizeof(TrafficState),
      {SEER_FIELD(TrafficState, queue), SEER_FIELD(TrafficState, phase),
       SEER_FIELD(TrafficState, pad), SEER_FIELD(TrafficState, served_step),
       SEER_FIELD(TrafficState, arrived_step), SEER_FIELD(TrafficState, served_total),
       SEER_FIELD(TrafficState, arrived_total)},
      r));
  r.push_back(checked_record("public", sizeof(TrafficPublic),
                             {SEER_FIELD(TrafficPublic, queued), SEER_FIELD(TrafficPublic, pad)},
                             r));
  r.push_back(checked_record(
      "payload", sizeof(TrafficPayload),
      {SEER_FIELD(TrafficPayload, approach), SEER_FIELD(TrafficPayload, pad)}, r));
  return w;
}

}  // namespace seer
