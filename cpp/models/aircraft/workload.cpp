// The aircraft_v0 declaration: parameters, spaces, keys and record layouts
// (see seer/workload.hpp). Adding a parameter: one row here, one read in
// params.cpp.
#include <cstddef>

#include "aircraft/aircraft.hpp"

namespace seer::aircraft {

WorkloadDecl aircraft_workload() {
  WorkloadDecl w;
  w.name = "aircraft";
  w.summary = "A UAV swarm flying to its goals, sharing state by radio beacons.";
  w.params = {
      int_param("num_uavs", 256, 1, 1 << 20, "agents"),
      int_param("substeps", 20, 1, 10000, "RK4 substeps per step"),
      int_param("wind_modes", 8, 0, 256, "sinusoidal wind modes"),
      int_param("beacon_every", 10, 1, 1000000, "substeps between beacons"),
      positive_param("comm_radius", 30.0, 0.0, 1e6, "beacon range, metres"),
      // 50 ms: a mesh radio's latency; it is also the lookahead, so 2-3
      // synchronization rounds (float rounding of the horizons) per 100 ms step.
      positive_param("comm_latency", 0.05, 0.0, 1e3,
                     "beacon delay, seconds (the runtime's lookahead: larger values give the "
                     "parallel executor more work per round)"),
      real_param("safe_radius", 3.0, 0.0, 1e6, "near-miss distance, metres"),
      int_param("k_neighbors", 4, 0, kMaxNeighborSlots,
                "neighbours in the observation (<= max_neighbors)"),
      int_param("max_neighbors", 16, 1, kMaxNeighborSlots, "neighbour-table size"),
      real_param("neighbor_timeout", 0.5, 0.0, 1e6,
                 "seconds after which a table entry is no longer observed"),
      positive_param("dt", 0.1, 0.0, 1e3, "seconds per step"),
      // Default airspace grows with the swarm so the density (and the number
      // of beacons per UAV) stays the same: 200 m x 200 m at 256 UAVs.
      derived_default(positive_param("arena_size", 0.0, 0.0, 1e7,
                                     "half-width of the square airspace, metres"),
                      "6.25 * sqrt(num_uavs)"),
      positive_param("ceiling", 60.0, 0.0, 1e6, "airspace ceiling, metres"),
      real_param("wind_speed", 3.0, 0.0, 1e3, "total amplitude of the wind modes, m/s"),
      int_param("wind_seed", 0, 0, std::int64_t{1} << 53, "scenario seed of the wind"),
      real_param("drag", 0.1, 0.0, 1e3, "quadratic drag per unit mass, 1/m"),
      real_param("gravity", 9.81, 0.0, 1e3, "m/s^2"),
      positive_param("max_rate", 3.0, 0.0, 1e3, "body-rate command at |action| = 1, rad/s"),
      real_param("rate_gain", 20.0, 0.0, 1e4, "body-rate controller gain, 1/s"),
      positive_param("battery_capacity", 1e5, 0.0, 1e12, "battery, joules"),
      real_param("power_idle", 20.0, 0.0, 1e9, "power drawn at rest, watts"),
      real_param("power_thrust", 150.0, 0.0, 1e9, "power per (1 + thrust)^2, watts"),
      real_param("power_rate", 10.0, 0.0, 1e9, "power per |rates|^2, watts"),
      real_param("near_miss_penalty", 1.0, 0.0, 1e9, "reward weight of a near miss"),
      real_param("energy_weight", 1e-3, 0.0, 1e9, "reward weight of a joule used"),
      real_param("crash_penalty", 10.0, 0.0, 1e9, "reward weight of a crash"),
  };
  w.observation = {"(17 + 6 * k_neighbors,)", "float32", "[-100, 100]"};
  w.action = {"(4,)", "float32", "[-1, 1]"};
  w.state = {"(8 * num_uavs,)", "float32", "[-100, 100]"};
  w.info_keys = {"near_misses", "near_misses_total", "beacons_received", "neighbors",
                 "crash_cause"};
  w.event_kinds = {"SUBSTEP", "BEACON"};

  std::vector<RecordDecl>& r = w.records;
  r.push_back(checked_record(
      "neighbor", sizeof(NeighborEntry),
      {SEER_FIELD(NeighborEntry, id), SEER_FIELD(NeighborEntry, pad), SEER_FIELD(NeighborEntry, pos),
       SEER_FIELD(NeighborEntry, vel), SEER_FIELD(NeighborEntry, t_heard)},
      r));
  r.push_back(checked_record(
      "state", sizeof(UavState),
      {SEER_FIELD(UavState, body),
       SEER_FIELD(UavState, goal),
       SEER_FIELD(UavState, cmd),
       SEER_FIELD(UavState, thrust_acc),
       SEER_FIELD(UavState, power),
       SEER_FIELD(UavState, energy),
       SEER_FIELD(UavState, energy_step),
       SEER_FIELD(UavState, t_step),
       SEER_FIELD(UavState, t_state),
       SEER_FIELD(UavState, prev_goal_dist),
       SEER_FIELD(UavState, near_misses_total),
       SEER_FIELD(UavState, beacons_total),
       SEER_FIELD(UavState, alive),
       SEER_FIELD(UavState, crash_cause),
       SEER_FIELD(UavState, crashed_step),
       SEER_FIELD(UavState, near_misses_step),
       SEER_FIELD(UavState, beacons_step),
       SEER_FIELD(UavState, pad),
       SEER_RECORD_FIELD(UavState, table, "neighbor")},
      r));
  r.push_back(checked_record("public", sizeof(UavPublic),
                             {SEER_FIELD(UavPublic, pos), SEER_FIELD(UavPublic, vel),
                              SEER_FIELD(UavPublic, alive), SEER_FIELD(UavPublic, pad)},
                             r));
  r.push_back(checked_record("substep", sizeof(SubstepPayload),
                             {SEER_FIELD(SubstepPayload, index), SEER_FIELD(SubstepPayload, pad)},
                             r));
  r.push_back(checked_record(
      "beacon", sizeof(BeaconPayload),
      {SEER_FIELD(BeaconPayload, sender), SEER_FIELD(BeaconPayload, pad),
       SEER_FIELD(BeaconPayload, pos), SEER_FIELD(BeaconPayload, vel),
       SEER_FIELD(BeaconPayload, t_sent)},
      r));
  return w;
}

WorkloadDecl aircraft_v1_workload() {
  WorkloadDecl w = aircraft_workload();
  w.name = "aircraft_v1";
  w.summary =
      "UAV swarm control with reward terms of comparable size: goal progress, separation and "
      "energy (the learnable task).";
  // Why these values: seer_env/envs/aircraft_v1.py.
  for (ParamDecl& p : w.params) {
    if (p.name == "num_uavs") p.default_value = 16;
    if (p.name == "near_miss_penalty") p.default_value = 0.2;
    if (p.name == "crash_penalty") p.default_value = 30.0;
  }
  w.state = {"(11 * num_uavs,)", "float32", "[-100, 100]"};
  return w;
}

}  // namespace seer::aircraft
