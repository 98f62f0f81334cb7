// predprey's declaration (seer/workload.hpp): parameters, spaces, keys and
// record layouts, registered with the factory by SEER_MODEL_MODULE.
#include <cstddef>

#include "predprey.hpp"

namespace predprey {

seer::WorkloadDecl predprey_workload() {
  seer::WorkloadDecl w;
  w.name = "predprey";
  w.summary = "Predators on a torus catching random-walking prey.";
  w.params = {
      seer::int_param("width", 12, 1, 4096, "grid cells along x (a torus)"),
      seer::int_param("height", 12, 1, 4096, "grid cells along y (a torus)"),
      seer::int_param("predators", 4, 1, 1 << 20, "predators (the agents)"),
      seer::int_param("prey", 16, 1, 1 << 20, "prey"),
      seer::int_param("view_radius", 2, 0, 16, "half-width of a predator's view window"),
      seer::positive_param("prey_move_mean", 0.3, 0.0, 1e6, "mean time between prey moves"),
      seer::real_param("respawn_time", 2.0, 0.0, 1e6, "time until caught prey reappears"),
      seer::real_param("step_cost", 0.01, 0.0, 1e6, "reward cost per step"),
      seer::positive_param("lookahead", 0.25, 0.0, 1e6, "minimum cross-entity delay"),
  };
  w.observation = {"(2 + (2 * view_radius + 1)**2,)", "float32", "[0, prey]"};
  w.action = {"Discrete(5)", "int64", "stay, up, down, left, right"};
  w.state = {"(width * height,)", "float32", "[0, prey]: live prey per cell"};
  w.info_keys = {"catches", "attempts"};
  w.total_keys = {"prey_caught"};
  w.event_kinds = {"MOVE", "CATCH", "CAUGHT", "RESPAWN"};
  std::vector<seer::RecordDecl>& r = w.records;
  r.push_back(seer::checked_record(
      "state", sizeof(State),
      {SEER_FIELD(State, x), SEER_FIELD(State, y), SEER_FIELD(State, alive),
       SEER_FIELD(State, caught_step), SEER_FIELD(State, catches), SEER_FIELD(State, attempts)},
      r));
  r.push_back(seer::checked_record(
      "public", sizeof(Public),
      {SEER_FIELD(Public, x), SEER_FIELD(Public, y), SEER_FIELD(Public, alive)}, r));
  r.push_back(seer::checked_record("cell", sizeof(Cell), {SEER_FIELD(Cell, x), SEER_FIELD(Cell, y)},
                                   r));
  return w;
}

}  // namespace predprey
