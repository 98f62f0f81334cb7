// A signalised traffic grid: the C++ twin of tests/support/traffic_grid_numba.py,
// the third model of the NumbaModel speed figures (docs/custom-models.md, "Speed").
//
// `width x height` intersections on a torus, each an agent. An intersection
// has four approach queues (cars waiting to cross, coming from the north,
// east, south and west) and a two-phase signal, the agent's action: 0 gives
// the north-south approaches green, 1 the east-west ones. Each approach is
// served by its own periodic self-event (SERVE, every `serve_interval`): on
// green, with a car waiting, one car crosses, turns (straight, left or right,
// uniformly) and reaches the neighbour it heads for `travel_time` later
// (ARRIVE there; travel_time is the lookahead). The cars circulate: none enters
// or leaves the grid. Most events are SERVEs that find nothing to do (red, or
// an empty queue), so the model's cost is the events' own: the runtime's path
// for a handler of a few instructions.
//
// Observation (float32): the four queues, the phase, the cars queued at the
// four neighbours (from the snapshot). Reward: minus the cars queued. infos:
// cars served and arrived this step; totals: the same since reset.
#pragma once

#include <cstdint>
#include <memory>

#include "seer/config.hpp"
#include "seer/model.hpp"
#include "seer/workload.hpp"

namespace seer {

struct TrafficState {
  std::uint32_t queue[4];  // cars waiting, by approach: from the north, east, south, west
  std::uint32_t phase;     // 0: north-south green, 1: east-west green
  std::uint32_t pad;
  std::uint64_t served_step, arrived_step;
  std::uint64_t served_total, arrived_total;
};

struct TrafficPublic {
  std::uint32_t queued;  // cars waiting at the intersection
  std::uint32_t pad;
};

struct TrafficPayload {
  std::uint32_t approach;  // SERVE: the approach served; ARRIVE: the one the car joins
  std::uint32_t pad;
};

class TrafficGridModel final : public ModelBase<TrafficGridModel, TrafficState, TrafficPublic> {
 public:
  static constexpr EventKind kServe = 0;
  static constexpr EventKind kArrive = 1;

  explicit TrafficGridModel(Config& config);
  static TrafficPublic make_public(const TrafficState& s) {
    return TrafficPublic{s.queue[0] + s.queue[1] + s.queue[2] + s.queue[3], 0};
  }

  void reset_states() override { allocate(spec_.num_entities); }
  void on_init(Context& ctx) override;
  void on_step_begin(Context& ctx) override;
  void on_action(Context& ctx, const ActionView& action) override;
  void on_event(Context& ctx, const Event& event) override;
  void observe(EntityId agent, float* obs) const override;
  double reward(EntityId agent) const override;
  void info(EntityId agent, std::int64_t* out) const override;
  void state(float* out) const override;
  void totals(std::int64_t* out) const override;

 private:
  // The intersection beyond `side` (0 north, 1 east, 2 south, 3 west) of `cell`.
  EntityId neighbour(EntityId cell, std::uint32_t side) const;
  void serve(Context& ctx, TrafficState& s, std::uint32_t approach);

  std::uint32_t width_, height_, cars_;
  double serve_interval_;
};

std::unique_ptr<Model> make_traffic_grid(Config& config);

// The declaration (traffic/workload.cpp).
WorkloadDecl traffic_grid_workload();

}  // namespace seer
